/**
 * From nothing to a working model: the commands behind the first-run walkthrough
 * (`contributes.walkthroughs` in package.json), Check Setup, and the check the chat view runs
 * when it opens without a working model. The server does the looking (toolgate.findModelServers,
 * toolgate.checkEndpoint, toolgate.doctor: docs/PROTOCOL.md); this module asks and shows.
 */
import * as api from './vscodeapi';
import { API_KEY_SECRET } from './commands';
import type { ServerLaunch } from './python';
import type { StreamingRunner } from './serverEnv';

/** Ids of the setup commands (package.json declares them). */
export const SetupCommand = {
  findModels: 'toolgate-vscode.findModels',
  configureEndpoint: 'toolgate-vscode.configureEndpoint',
  installLocalModel: 'toolgate-vscode.installLocalModel',
  testConnection: 'toolgate-vscode.testConnection',
  sampleTask: 'toolgate-vscode.sampleTask',
  checkSetup: 'toolgate-vscode.checkSetup',
  reinstallServer: 'toolgate-vscode.reinstallServer',
  getStarted: 'toolgate-vscode.getStarted',
} as const;

/** The walkthrough, as `workbench.action.openWalkthrough` names it: publisher.name#id. */
export const WALKTHROUGH = 'toolgate.toolgate-vscode#firstRun';

/** Context key set once a connection test passed: the walkthrough's model steps are done. */
export const MODEL_READY = 'toolgate-vscode.modelReady';

/** The first task the walkthrough offers, changed as the person likes before it is sent. */
export const SAMPLE_TASK =
  'Read this workspace and propose one small, safe improvement (a docstring, a clearer name or a missing test) as a diff.';

/** The ports the server probes, for the message when none answers (toolgate.setup.local_servers). */
const PROBED = 'Ollama 11434, LM Studio 1234, llama.cpp 8080, vLLM 8000';

/** A model server found on this machine (toolgate.findModelServers). */
export interface FoundServer {
  name: string;
  baseUrl: string;
  models: string[];
}

/** What toolgate.checkEndpoint answers. */
export interface EndpointReport {
  ok: boolean;
  baseUrl: string | null;
  model: string | null;
  models: string[] | null;
  toolCalling: 'native' | 'text' | null;
  problem: string | null;
  fix: string | null;
  notes: string[];
  summary: string;
}

/** What toolgate.doctor answers: the report `toolgate doctor --json` prints. */
export interface DoctorReport {
  ok: boolean;
  text: string;
  checks: { name: string; status: string; summary: string; fix: string | null }[];
}

/** What the setup commands need from the rest of the extension. */
export interface SetupDeps {
  server: {
    ensureRunning(): Promise<boolean>;
    isRunning(): boolean;
    execute<T>(command: string, args: unknown[]): Promise<T>;
    restart(): Promise<void>;
    reinstall(): Promise<void>;
    pushConfiguration(): Promise<void>;
    launch: ServerLaunch | undefined;
  };
  /** Why the bundled server could not be made, when it could not. */
  serverProblem(): string | undefined;
  ask(task: string): Promise<void>;
  secrets: { store(key: string, value: string): Thenable<void> };
  /** The Output channel "Toolgate Server": install output goes there. */
  serverOutput: { appendLine(line: string): void; show(preserveFocus?: boolean): void };
  /** The Output channel "Toolgate Setup": the doctor's report. */
  report: { clear(): void; append(text: string): void; show(preserveFocus?: boolean): void };
  stream: StreamingRunner;
}

/** A row of the model picker. */
interface ModelItem extends api.QuickPickItem {
  action: 'use' | 'local' | 'other';
  baseUrl?: string;
  model?: string;
}

/** The picker's rows: each model of each server found, then the embedded model and any URL. */
export function modelItems(found: FoundServer[]): ModelItem[] {
  const items: ModelItem[] = [];
  for (const server of found) {
    for (const model of server.models) {
      items.push({ label: model, description: `${server.name} · ${server.baseUrl}`, action: 'use', baseUrl: server.baseUrl, model });
    }
    if (server.models.length === 0) {
      items.push({
        label: `${server.name}: no model loaded`,
        description: server.baseUrl,
        detail: `Load or pull a model in ${server.name}, then look again.`,
        action: 'use',
        baseUrl: server.baseUrl,
      });
    }
  }
  items.push(
    { label: '$(package) The embedded local model', description: 'install it here: about 10 minutes and 470 MB, no server needed', action: 'local' },
    { label: '$(globe) Another OpenAI-compatible server…', description: 'any URL, with an API key', action: 'other' },
  );
  return items;
}

/** The setup commands, by id. */
export function setupHandlers(deps: SetupDeps): Record<string, (...args: unknown[]) => unknown> {
  const { server } = deps;

  async function running(): Promise<boolean> {
    if (await server.ensureRunning()) {
      return true;
    }
    const problem = deps.serverProblem() ?? 'the server did not start (see the Output channel "Toolgate Server")';
    void api.showErrorMessage(`Toolgate: ${problem}`, 'Check Setup').then((choice) => {
      if (choice) {
        void api.executeCommand(SetupCommand.checkSetup);
      }
    });
    return false;
  }

  async function testConnection(target?: { baseUrl: string; model?: string }, quiet = false): Promise<EndpointReport | undefined> {
    if (!(await running())) {
      return undefined;
    }
    const report = await api.withQuietProgress('Toolgate: testing the connection to the model…', () =>
      server.execute<EndpointReport>('toolgate.checkEndpoint', target ? [target] : []),
    );
    await api.setContext(MODEL_READY, report.ok);
    if (report.ok) {
      if (!quiet) {
        void api.showInformationMessage(`Toolgate: ${report.summary}.`, 'Try a Sample Task').then((choice) => {
          if (choice) {
            void api.executeCommand(SetupCommand.sampleTask);
          }
        });
      }
      return report;
    }
    const fix = report.fix ? ` Fix: ${report.fix}.` : '';
    void api.showWarningMessage(`Toolgate: no working model yet: ${report.problem ?? report.summary}.${fix}`, 'Find Model Servers', 'Get Started', 'Check Setup').then((choice) => {
      const command = { 'Find Model Servers': SetupCommand.findModels, 'Get Started': SetupCommand.getStarted, 'Check Setup': SetupCommand.checkSetup }[choice ?? ''];
      if (command) {
        void api.executeCommand(command);
      }
    });
    return report;
  }

  /** Point the editor's settings at a server and model, then test the pair. */
  async function use(baseUrl: string, model: string | undefined): Promise<void> {
    await api.updateSetting('baseUrl', baseUrl);
    await api.updateSetting('model', model || undefined);
    await server.pushConfiguration();
    await testConnection({ baseUrl, ...(model ? { model } : {}) });
  }

  async function configureEndpoint(): Promise<void> {
    const baseUrl = await api.showInputBox({
      title: 'Toolgate: Use an OpenAI-Compatible Server',
      prompt: 'The base URL of the chat API, e.g. https://api.openai.com/v1 or http://127.0.0.1:8000/v1',
      placeHolder: 'https://…/v1',
      ignoreFocusOut: true,
      validateInput: (value: string) => (/^https?:\/\/\S+$/.test(value.trim()) ? undefined : 'a URL that starts with http:// or https://'),
    });
    if (!baseUrl?.trim()) {
      return;
    }
    const key = await api.showInputBox({
      title: 'Toolgate: API Key',
      prompt: 'The key for this server, kept in the editor\'s secret storage (leave empty when it needs none)',
      password: true,
      ignoreFocusOut: true,
    });
    if (key === undefined) {
      return;
    }
    if (key.trim()) {
      await deps.secrets.store(API_KEY_SECRET, key.trim());
    }
    await server.pushConfiguration();
    if (!(await running())) {
      return;
    }
    const listed = await server.execute<EndpointReport>('toolgate.checkEndpoint', [{ baseUrl: baseUrl.trim() }]);
    let model: string | undefined;
    if (listed.models && listed.models.length > 0) {
      const picked = await api.showQuickPick(
        listed.models.map((id) => ({ label: id })),
        { title: 'Toolgate: Model', placeHolder: `${baseUrl.trim()} serves these models: pick one`, ignoreFocusOut: true },
      );
      if (!picked) {
        return;
      }
      model = picked.label;
    } else {
      model = await api.showInputBox({ title: 'Toolgate: Model', prompt: 'The model name to send', ignoreFocusOut: true });
      if (!model?.trim()) {
        return;
      }
    }
    await use(baseUrl.trim(), model.trim());
  }

  async function findModels(): Promise<void> {
    if (!(await running())) {
      return;
    }
    const found = await api.withQuietProgress('Toolgate: looking for model servers on this machine…', () =>
      server.execute<FoundServer[]>('toolgate.findModelServers', []),
    );
    const picked = await api.showQuickPick(modelItems(found), {
      title: 'Toolgate: Pick a Model',
      placeHolder: found.length
        ? `Found on this machine: ${found.map((each) => each.name).join(', ')}. Pick a model.`
        : `No model server answered on 127.0.0.1 (${PROBED}). Pick another way.`,
      ignoreFocusOut: true,
    });
    if (!picked) {
      return;
    }
    if (picked.action === 'local') {
      await installLocalModel();
    } else if (picked.action === 'other') {
      await configureEndpoint();
    } else if (picked.baseUrl) {
      await use(picked.baseUrl, picked.model);
    }
  }

  async function installLocalModel(): Promise<void> {
    if (!(await running())) {
      return;
    }
    const python = server.launch?.python;
    if (!python) {
      void api.showInformationMessage(
        'Toolgate: the server runs from toolgate.serverCommand: run `toolgate model install` with that installation, then Test Connection.',
      );
      return;
    }
    const started = Date.now();
    deps.serverOutput.appendLine(`$ ${python} -m toolgate model install`);
    let result: { code: number; output: string } | undefined;
    try {
      result = await api.withNotificationProgress('Toolgate: installing the embedded model', async (progress, token) => {
        const abort = new AbortController();
        token.onCancellationRequested(() => abort.abort());
        return deps.stream(
          python,
          ['-m', 'toolgate', 'model', 'install'],
          (line) => {
            deps.serverOutput.appendLine(line);
            if (line.startsWith('==> ')) {
              const seconds = Math.round((Date.now() - started) / 1000);
              progress.report({ message: `${line.slice(4)} (${seconds} s)` });
            }
          },
          abort.signal,
        );
      });
    } catch (error) {
      result = { code: 1, output: (error as Error).message };
    }
    const took = formatSeconds((Date.now() - started) / 1000);
    if (result.code !== 0) {
      deps.serverOutput.show(true);
      const choice = await api.showErrorMessage(
        `Toolgate: the embedded model did not install (after ${took}). The output is in the Output channel "Toolgate Server".`,
        'Retry',
        'Show Output',
      );
      if (choice === 'Retry') {
        await installLocalModel();
      } else if (choice === 'Show Output') {
        deps.serverOutput.show(false);
      }
      return;
    }
    // With no URL set, runs use the embedded model; the server starts again to find it.
    await api.updateSetting('baseUrl', undefined);
    await api.updateSetting('model', undefined);
    void api.showInformationMessage(`Toolgate: the embedded model is installed (took ${took}).`);
    await server.restart();
    await testConnection();
  }

  async function checkSetup(): Promise<void> {
    deps.report.clear();
    if (!(await server.ensureRunning())) {
      deps.report.append(`Toolgate: ${deps.serverProblem() ?? 'the server did not start; see the Output channel "Toolgate Server".'}\n`);
      deps.report.show(false);
      return;
    }
    const report = await api.withQuietProgress('Toolgate: checking the setup…', () =>
      server.execute<DoctorReport>('toolgate.doctor', []),
    );
    deps.report.append(`${report.text}\n`);
    deps.report.show(false);
    if (!report.ok) {
      void api.showWarningMessage('Toolgate: a run cannot start yet; the report says what to fix.');
    }
  }

  return {
    [SetupCommand.findModels]: () => findModels(),
    [SetupCommand.configureEndpoint]: () => configureEndpoint(),
    [SetupCommand.installLocalModel]: () => installLocalModel(),
    // `{quiet: true}` (the chat view's check): say nothing when the model works.
    [SetupCommand.testConnection]: (options?: unknown) =>
      testConnection(undefined, (options as { quiet?: unknown } | undefined)?.quiet === true),
    [SetupCommand.sampleTask]: async () => {
      const task = await api.showInputBox({
        title: 'Toolgate: Try a Sample Task',
        prompt: 'A first task on this workspace: change it as you like, then press Enter. Each change comes back as a diff to accept or reject.',
        value: SAMPLE_TASK,
        ignoreFocusOut: true,
      });
      if (task?.trim()) {
        await deps.ask(task.trim());
      }
    },
    [SetupCommand.checkSetup]: () => checkSetup(),
    [SetupCommand.reinstallServer]: () => server.reinstall(),
    [SetupCommand.getStarted]: () => api.executeCommand('workbench.action.openWalkthrough', WALKTHROUGH, false),
  };
}

/** Register the setup commands (from setupHandlers). */
export function registerSetupCommands(handlers: Record<string, (...args: unknown[]) => unknown>): api.Disposable[] {
  return Object.entries(handlers).map(([id, handler]) => api.registerCommand(id, handler));
}

/**
 * When the chat view opens: the endpoint is checked once (quietly when it works), so a person
 * without a working model is told how to get one instead of meeting a bare error on the first ask.
 */
export function chatOpenCheck(test: () => Promise<unknown>): () => void {
  let checked = false;
  return () => {
    if (!checked) {
      checked = true;
      void test();
    }
  };
}

/** "4 min 12 s", "38 s". */
export function formatSeconds(seconds: number): string {
  const whole = Math.round(seconds);
  return whole >= 60 ? `${Math.floor(whole / 60)} min ${whole % 60} s` : `${whole} s`;
}
