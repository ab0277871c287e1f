/** The `toolgate.*` settings and the initializationOptions the server is started with. */

export type ToolCallingMode = 'auto' | 'native' | 'text';
export type Approval = 'auto' | 'ask' | 'deny';
export type ApprovalMode = 'ask' | 'auto-edits' | 'read-only';

/** Every setting this extension reads, with its value after defaults. */
export interface ToolgateSettings {
  model: string;
  baseUrl: string;
  toolCallingMode: ToolCallingMode;
  approval: Record<string, Approval>;
  approvalMode: ApprovalMode;
  limits: Record<LimitKey, number>;
  confirmInEditor: boolean;
  openDiff: 'auto' | 'notify';
  testFailureSeverity: 'error' | 'warning' | 'information' | 'hint';
  pythonPath: string;
  serverCommand: string[];
}

/**
 * What the server receives as initializationOptions and in didChangeConfiguration. Only what the
 * person set is sent: `model` and `baseUrl` are null when unset, so the server's own sources
 * (OPENAI_BASE_URL, TOOLGATE_MODEL, its config file) decide; the rest is left out.
 */
export interface InitializationOptions {
  model: string | null;
  baseUrl: string | null;
  /** null when there is none: a key removed in the editor is removed on the server too. */
  apiKey?: string | null;
  toolCalling?: { mode: ToolCallingMode };
  approval?: Record<string, Approval>;
  approvalMode?: ApprovalMode;
  limits?: Partial<Record<LimitKey, number>>;
  review: { confirmInEditor: boolean };
  diagnostics: { testFailureSeverity: ToolgateSettings['testFailureSeverity'] };
  trusted: boolean;
}

/**
 * The run limits below `toolgate.limits.`, as package.json declares them: the default, whether
 * the value is a whole number, and the bound it must exceed. A test keeps them equal.
 */
export const LIMITS = {
  maxSteps: { fallback: 30, integer: true, above: 0 },
  maxLlmCalls: { fallback: 40, integer: true, above: 0 },
  maxRunSeconds: { fallback: 900, integer: true, above: 0 },
  maxToolRetries: { fallback: 3, integer: true, above: -1 },
  commandTimeoutSeconds: { fallback: 300, integer: false, above: 0 },
} as const;

export type LimitKey = keyof typeof LIMITS;

const LIMIT_KEYS = Object.keys(LIMITS) as LimitKey[];

/** Reads one key below `toolgate.` (e.g. `limits.maxSteps`); undefined when unset. */
export type SettingReader = (key: string) => unknown;

/** Settings whose change needs a new server process rather than didChangeConfiguration. */
export const RESTART_KEYS = ['pythonPath', 'serverCommand'] as const;

const APPROVALS = new Set<Approval>(['auto', 'ask', 'deny']);

function str(value: unknown, fallback: string): string {
  return typeof value === 'string' ? value : fallback;
}

function limit(value: unknown, key: LimitKey): number {
  const rule = LIMITS[key];
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    return rule.fallback;
  }
  const number = rule.integer ? Math.floor(value) : value;
  return number > rule.above ? number : rule.fallback;
}

function oneOf<T extends string>(value: unknown, allowed: readonly T[], fallback: T): T {
  return allowed.includes(value as T) ? (value as T) : fallback;
}

/** Read and validate the settings; a wrong value falls back to its default. */
export function readSettings(get: SettingReader): ToolgateSettings {
  const approvalRaw = get('approval');
  const approval: Record<string, Approval> = {};
  if (approvalRaw && typeof approvalRaw === 'object') {
    for (const [tool, value] of Object.entries(approvalRaw as Record<string, unknown>)) {
      if (APPROVALS.has(value as Approval)) {
        approval[tool] = value as Approval;
      }
    }
  }
  const serverCommandRaw = get('serverCommand');
  const serverCommand = Array.isArray(serverCommandRaw)
    ? serverCommandRaw.filter((part): part is string => typeof part === 'string' && part !== '')
    : [];
  return {
    model: str(get('model'), 'gpt-4o-mini'),
    baseUrl: str(get('baseUrl'), 'https://api.openai.com/v1'),
    toolCallingMode: oneOf(get('toolCalling.mode'), ['auto', 'native', 'text'] as const, 'auto'),
    approval,
    approvalMode: oneOf(get('approvalMode'), ['ask', 'auto-edits', 'read-only'] as const, 'ask'),
    limits: Object.fromEntries(
      LIMIT_KEYS.map((key) => [key, limit(get(`limits.${key}`), key)]),
    ) as Record<LimitKey, number>,
    confirmInEditor: get('review.confirmInEditor') === true,
    openDiff: oneOf(get('review.openDiff'), ['auto', 'notify'] as const, 'auto'),
    testFailureSeverity: oneOf(
      get('diagnostics.testFailureSeverity'),
      ['error', 'warning', 'information', 'hint'] as const,
      'error',
    ),
    pythonPath: str(get('pythonPath'), '').trim(),
    serverCommand,
  };
}

/** Whether the person set a key below `toolgate.` (not a default). */
export type SetByPerson = (key: string) => boolean;

/**
 * Build the server's options from what the person set (`isSet`, from `inspect()`): a default
 * of this extension must not hide the server's environment (OPENAI_BASE_URL, TOOLGATE_MODEL).
 * The API key is included only when there is one.
 */
export function toInitializationOptions(
  settings: ToolgateSettings,
  apiKey: string | undefined,
  trusted: boolean,
  isSet: SetByPerson = () => true,
): InitializationOptions {
  const options: InitializationOptions = {
    model: isSet('model') && settings.model ? settings.model : null,
    baseUrl: isSet('baseUrl') && settings.baseUrl ? settings.baseUrl : null,
    review: { confirmInEditor: settings.confirmInEditor },
    diagnostics: { testFailureSeverity: settings.testFailureSeverity },
    trusted,
  };
  if (isSet('toolCalling.mode')) {
    options.toolCalling = { mode: settings.toolCallingMode };
  }
  if (isSet('approval')) {
    options.approval = { ...settings.approval };
  }
  if (isSet('approvalMode')) {
    options.approvalMode = settings.approvalMode;
  }
  const limits: NonNullable<InitializationOptions['limits']> = {};
  for (const key of LIMIT_KEYS) {
    if (isSet(`limits.${key}`)) {
      limits[key] = settings.limits[key];
    }
  }
  if (Object.keys(limits).length > 0) {
    options.limits = limits;
  }
  options.apiKey = apiKey || null;
  return options;
}

/** True when any of the changed settings needs the server restarted. */
export function needsRestart(affects: (section: string) => boolean): boolean {
  return RESTART_KEYS.some((key) => affects(`toolgate.${key}`));
}
