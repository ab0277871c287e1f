/** A stand-in for src/vscodeapi.ts: records what the extension asks of the editor and answers as scripted. */
import type { DiffTab } from '../src/vscodeapi';

export interface FakeUri {
  scheme: string;
  path: string;
  query: string;
  toString(): string;
}

/** An open diff tab, as src/vscodeapi.ts describes it. */
export interface FakeDiffTab {
  original: FakeUri;
  modified: FakeUri;
  isActive: boolean;
  isVisible: boolean;
  tab: unknown;
}

/** A uri object shaped like vscode.Uri, enough for the modules under test. */
export function uri(scheme: string, path: string, query = ''): FakeUri {
  return {
    scheme,
    path,
    query,
    toString: () => `${scheme}://${path}${query ? `?${query}` : ''}`,
  };
}

function parse(text: string): FakeUri {
  const match = /^([a-z-]+):(?:\/\/)?([^?]*)(?:\?(.*))?$/.exec(text);
  if (!match) {
    throw new Error(`bad uri ${text}`);
  }
  const [, scheme, path, query = ''] = match;
  return { scheme, path, query, toString: () => text };
}


/** Everything the fake records and every answer it gives; reset before each test. */
export const fake = {
  messages: [] as { level: string; message: string; items: string[] }[],
  /** Answers for show*Message, in order; undefined when empty. */
  messageAnswers: [] as (string | undefined)[],
  inputBoxes: [] as { options: Record<string, unknown> }[],
  inputAnswers: [] as (string | undefined)[],
  quickPicks: [] as { items: unknown[] }[],
  quickPickAnswer: (items: unknown[]): unknown => items[0],
  commands: [] as { id: string; args: unknown[] }[],
  registered: new Map<string, (...args: unknown[]) => unknown>(),
  context: new Map<string, unknown>(),
  settings: {} as Record<string, unknown>,
  trusted: true,
  tabs: [] as FakeDiffTab[],
  closed: [] as unknown[],
  selection: undefined as ReturnType<typeof activeSelection>,
  diagnostics: new Map<string, unknown[]>(),
  diagnosticListeners: new Set<(uris: string[]) => void>(),
  saved: [] as string[],
  /** Uris that saveDocument reports as not saved. */
  unsavable: new Set<string>(),
  progress: [] as {
    title: string;
    reports: string[];
    cancel: () => void;
    done: boolean;
  }[],
  statusMessages: [] as string[],
  /** The workspace's files, as findFiles answers them (uris). */
  files: [] as string[],
  editorListeners: new Set<() => void>(),
  clipboard: '',
  shown: [] as string[],
  reset(): void {
    this.messages = [];
    this.messageAnswers = [];
    this.inputBoxes = [];
    this.inputAnswers = [];
    this.quickPicks = [];
    this.quickPickAnswer = (items) => items[0];
    this.files = [];
    this.editorListeners = new Set();
    this.commands = [];
    this.registered = new Map();
    this.context = new Map();
    this.settings = {};
    this.trusted = true;
    this.tabs = [];
    this.closed = [];
    this.selection = undefined;
    this.diagnostics = new Map();
    this.diagnosticListeners = new Set();
    this.saved = [];
    this.unsavable = new Set();
    this.progress = [];
    this.statusMessages = [];
    this.clipboard = '';
    this.shown = [];
  },
};

function message(level: string) {
  return (text: string, ...items: string[]) => {
    fake.messages.push({ level, message: text, items });
    return Promise.resolve(fake.messageAnswers.shift());
  };
}

export const showInformationMessage = message('info');
export const showWarningMessage = message('warning');
export const showErrorMessage = message('error');

export function showInputBox(options: Record<string, unknown>): Promise<string | undefined> {
  fake.inputBoxes.push({ options });
  return Promise.resolve(fake.inputAnswers.shift());
}
export function showQuickPick<T>(items: T[]): Promise<T | undefined> {
  fake.quickPicks.push({ items });
  return Promise.resolve(fake.quickPickAnswer(items) as T | undefined);
}
export function createOutputChannel(): { lines: string[]; append(t: string): void; show(): void } {
  const lines: string[] = [];
  return { lines, append: (t: string) => lines.push(t), show: () => undefined };
}
export function setStatusBarMessage(text: string): { dispose(): void } {
  fake.statusMessages.push(text);
  return { dispose: () => undefined };
}
export function withNotificationProgress<R>(
  title: string,
  task: (
    progress: { report(value: { message?: string }): void },
    token: { readonly isCancellationRequested: boolean; onCancellationRequested(listener: () => void): void },
  ) => Promise<R>,
): Promise<R> {
  const cancelListeners: (() => void)[] = [];
  const token = {
    isCancellationRequested: false,
    onCancellationRequested: (listener: () => void) => void cancelListeners.push(listener),
  };
  const entry = {
    title,
    reports: [] as string[],
    cancel: () => {
      token.isCancellationRequested = true;
      cancelListeners.forEach((listener) => listener());
    },
    done: false,
  };
  fake.progress.push(entry);
  const result = task({ report: (value) => entry.reports.push(value.message ?? '') }, token);
  return Promise.resolve(result).finally(() => {
    entry.done = true;
  });
}
export function activeSelection():
  | {
      uri: string;
      text: string;
      range: { start: { line: number; character: number }; end: { line: number; character: number } };
      empty: boolean;
    }
  | undefined {
  return fake.selection;
}
export function diffTabs(): DiffTab[] {
  return fake.tabs as unknown as DiffTab[];
}
export function closeTabs(tabs: unknown[]): Promise<boolean> {
  fake.closed.push(...tabs);
  fake.tabs = fake.tabs.filter((tab) => !tabs.includes(tab.tab));
  return Promise.resolve(true);
}
export function onDidChangeTabs(): { dispose(): void } {
  return { dispose: () => undefined };
}
export function registerCommand(id: string, handler: (...args: unknown[]) => unknown): { dispose(): void } {
  fake.registered.set(id, handler);
  return { dispose: () => fake.registered.delete(id) };
}
export function executeCommand(id: string, ...args: unknown[]): Promise<unknown> {
  fake.commands.push({ id, args });
  return Promise.resolve(undefined);
}
export function setContext(key: string, value: unknown): Promise<unknown> {
  fake.context.set(key, value);
  return Promise.resolve(undefined);
}
export function getSetting(key: string): unknown {
  return fake.settings[key];
}
export function isTrusted(): boolean {
  return fake.trusted;
}
export function asRelativePath(text: string): string {
  // As VS Code's: a file outside the workspace folder (/work) keeps its absolute path.
  return text.replace(/^file:\/\/\/work\//, '').replace(/^file:\/\//, '');
}
export function workspaceFileUri(path: string): string | undefined {
  return path.startsWith('/') ? `file://${path}` : `file:///work/${path}`;
}
export async function showDocument(target: string): Promise<void> {
  fake.shown.push(target);
}
export function parseUri(text: string): FakeUri {
  return parse(text);
}
export function makeUri(scheme: string, path: string, query: string): FakeUri {
  return uri(scheme, path, query);
}
export async function saveDocument(target: string): Promise<boolean> {
  if (fake.unsavable.has(target)) {
    return false;
  }
  fake.saved.push(target);
  return true;
}
export function makeCodeLens(line: number, title: string, command: string, args: unknown[]) {
  return { range: { start: { line, character: 0 } }, command: { title, command, arguments: args } };
}
export function allDiagnostics(): [string, unknown[]][] {
  return [...fake.diagnostics.entries()];
}
export async function findFiles(max: number): Promise<string[]> {
  return fake.files.slice(0, max);
}
export function onDidChangeActiveEditor(listener: () => void): { dispose(): void } {
  fake.editorListeners.add(listener);
  return { dispose: () => fake.editorListeners.delete(listener) };
}
export function getDiagnostics(target: string): unknown[] {
  return fake.diagnostics.get(target) ?? [];
}
export function onDidChangeDiagnostics(listener: (uris: string[]) => void): { dispose(): void } {
  fake.diagnosticListeners.add(listener);
  return { dispose: () => fake.diagnosticListeners.delete(listener) };
}
/** Fire a diagnostics change as a language server would. */
export function fireDiagnostics(uris: string[]): void {
  for (const listener of [...fake.diagnosticListeners]) {
    listener(uris);
  }
}
export function newEventEmitter<T>() {
  const listeners = new Set<(value: T) => void>();
  const fired: T[] = [];
  return {
    fired,
    event: (listener: (value: T) => void) => {
      listeners.add(listener);
      return { dispose: () => listeners.delete(listener) };
    },
    fire: (value: T) => {
      fired.push(value);
      listeners.forEach((listener) => listener(value));
    },
    dispose: () => listeners.clear(),
  };
}
export function writeClipboard(text: string): Promise<void> {
  fake.clipboard = text;
  return Promise.resolve();
}
export function withQuietProgress<R>(title: string, task: () => Promise<R>): Promise<R> {
  fake.progress.push({ title, reports: [], cancel: () => undefined, done: false });
  return task();
}
export function showModalWarning(message: string, _detail: string, ...items: string[]): Promise<string | undefined> {
  fake.messages.push({ level: 'modal', message, items });
  return Promise.resolve(fake.messageAnswers.shift());
}
export function updateSetting(key: string, value: unknown): Promise<void> {
  if (value === undefined) {
    delete fake.settings[key];
  } else {
    fake.settings[key] = value;
  }
  return Promise.resolve();
}
export function isSettingSet(key: string): boolean {
  return key in fake.settings;
}
