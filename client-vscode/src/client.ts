/** The language client's life: find the server command, check the installed version, start, restart, stop. */
import {
  DidChangeConfigurationNotification,
  ExecuteCommandRequest,
  LanguageClient,
  RevealOutputChannelOn,
  State,
  type LanguageClientOptions,
  type ServerOptions,
} from 'vscode-languageclient/node';
import { noServerProgress } from './progress';
import * as api from './vscodeapi';
import type { Controller, ServerApi } from './controller';
import type {
  AgentEvent,
  PlanPayload,
  Proposal,
  ProposalResolved,
  ReviewLoopEnd,
  SaveDocumentsParams,
  SessionChanged,
} from './protocol';
import { CommandCancelled, Method, ServerCommand } from './protocol';
import type { BundledServer } from './bundledServer';
import { checkToolgate, resolveServerLaunch, type ServerLaunch } from './python';
import type { InitializationOptions, ToolgateSettings } from './settings';
import { readSettings, toInitializationOptions } from './settings';

/** How long a command waits for a starting server before it gives up. */
export const SERVER_START_TIMEOUT_MS = 120_000;

/** What the manager needs from the rest of the extension. */
export interface ServerManagerDeps {
  serverOutput: api.LogOutputChannel;
  apiKey(): Promise<string | undefined>;
  controller(): Controller;
  refreshProposal(proposal: Proposal): void;
  /** The server the .vsix carries; undefined in a build without one (then python3 runs it). */
  bundled?: BundledServer;
}

/** Starts `toolgate lsp` and forwards its custom messages to the controller. */
export class ServerManager implements ServerApi {
  private client: LanguageClient | undefined;
  private starting: Promise<void> | undefined;
  /** How the server was last started: its interpreter runs `toolgate model install` too. */
  launch: ServerLaunch | undefined;
  /** While the bundled server's environment is being prepared (made, or checked). */
  private installing = false;

  constructor(private readonly deps: ServerManagerDeps) {}

  settings(): ToolgateSettings {
    return readSettings(api.getSetting);
  }

  async options(): Promise<InitializationOptions> {
    return toInitializationOptions(this.settings(), await this.deps.apiKey(), api.isTrusted(), api.isSettingSet);
  }

  /**
   * Wait for the server, starting it if it is not running or starting, with a progress
   * notification while it starts; false only when it does not start.
   */
  async ensureRunning(timeoutMs: number = SERVER_START_TIMEOUT_MS): Promise<boolean> {
    if (this.isRunning()) {
      return true;
    }
    await api.withQuietProgress('Toolgate: starting the server…', async () => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timeout = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, timeoutMs);
      });
      await Promise.race([this.starting ?? this.start(), timeout]);
      clearTimeout(timer);
      // The first start installs the bundled server, which may take minutes on a slow
      // network: a command waits for that (it has its own notification) rather than failing.
      if (this.installing) {
        await this.starting;
      }
    });
    return this.isRunning();
  }

  isRunning(): boolean {
    return this.client?.state === State.Running;
  }

  /** Run one of the server's commands through workspace/executeCommand; `token` withdraws it. */
  async execute<T>(command: string, args: unknown[], token?: api.CancellationToken): Promise<T> {
    if (!this.client || !this.isRunning()) {
      throw new Error('the server is not running');
    }
    try {
      return (await this.client.sendRequest(ExecuteCommandRequest.type, { command, arguments: args }, token)) as T;
    } catch (error) {
      // The server answers a withdrawn request with RequestCancelled: not a failure to show.
      if (token?.isCancellationRequested) {
        throw new CommandCancelled(command);
      }
      throw error;
    }
  }

  /** Start the server (once; concurrent callers share the same start). */
  start(): Promise<void> {
    this.starting ??= this.doStart().finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  private async doStart(): Promise<void> {
    const controller = this.deps.controller();
    controller.setServerState('starting');
    const settings = this.settings();
    const started = Date.now();
    let launch: ServerLaunch;
    const bundled = this.deps.bundled;
    if (bundled && settings.serverCommand.length === 0 && !settings.pythonPath) {
      // Nothing set by the person: the server this extension carries, in its own environment.
      this.installing = true;
      const python = await bundled.prepare().finally(() => {
        this.installing = false;
      });
      if (!python) {
        controller.setServerState('error');
        return;
      }
      launch = { command: python, args: ['-m', 'toolgate', 'lsp'], python, origin: 'bundled' };
    } else {
      launch = await resolveServerLaunch(settings, api.pythonExtensionInterpreter);
    }
    this.deps.serverOutput.appendLine(
      `Starting ${[launch.command, ...launch.args].join(' ')} (from ${launch.origin})`,
    );
    this.launch = launch;
    if (launch.python && launch.origin !== 'bundled') {
      const check = await checkToolgate(launch.python);
      if (!check.ok) {
        controller.setServerState('error');
        this.deps.serverOutput.appendLine(check.message);
        void api.showErrorMessage(check.message, 'Copy Install Command', 'Open Settings').then((choice) => {
          if (choice === 'Copy Install Command') {
            void api.writeClipboard(check.installCommand);
          } else if (choice === 'Open Settings') {
            void api.executeCommand('workbench.action.openSettings', 'toolgate.pythonPath');
          }
        });
        return;
      }
      this.deps.serverOutput.appendLine(`Found toolgate ${check.version}`);
    }
    const cwd = api.workspaceFolderPath();
    const serverOptions: ServerOptions = {
      command: launch.command,
      args: launch.args,
      options: { cwd, env: { ...process.env, PYTHONUNBUFFERED: '1' } },
    };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [{ scheme: 'file' }],
      initializationOptions: await this.options(),
      outputChannel: this.deps.serverOutput,
      traceOutputChannel: this.deps.serverOutput,
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      // The server is told about configuration changes with the full options (see pushConfiguration).
      synchronize: {},
      middleware: {
        // The server's "Edit selection…" code action carries the file and the lines; the
        // instruction is the person's, asked here as the extension's own command asks it.
        executeCommand: (command, args, next) =>
          command === ServerCommand.editSelection && !(args[0] as { instruction?: string } | undefined)?.instruction
            ? api.executeCommand('toolgate-vscode.editSelection', args[0])
            : next(command, args),
      },
    };
    const client = new LanguageClient('toolgate', 'Toolgate', serverOptions, clientOptions);
    client.registerFeature(noServerProgress);
    client.onNotification(Method.proposal, (proposal: Proposal) => {
      void controller.handleProposal(proposal, (p) => this.deps.refreshProposal(p));
    });
    client.onNotification(Method.proposalResolved, (resolved: ProposalResolved) => {
      void controller.handleProposalResolved(resolved);
    });
    client.onNotification(Method.event, (event: AgentEvent) => controller.handleEvent(event));
    client.onNotification(Method.plan, (plan: PlanPayload) => controller.handlePlan(plan));
    client.onNotification(Method.reviewLoop, (end: ReviewLoopEnd) => controller.handleReviewLoop(end));
    client.onNotification(Method.sessionChanged, (changed: SessionChanged) => controller.handleSessionChanged(changed));
    client.onRequest(Method.saveDocuments, (params: SaveDocumentsParams) =>
      controller.handleSaveDocuments(params),
    );
    client.onDidChangeState((change) => {
      if (change.newState === State.Running) {
        controller.setServerState('idle');
      } else if (change.newState === State.Stopped) {
        controller.setServerState('stopped');
      }
    });
    this.client = client;
    try {
      await client.start();
    } catch (error) {
      controller.setServerState('error');
      const message = `Toolgate: the server did not start: ${(error as Error).message}`;
      this.deps.serverOutput.appendLine(message);
      void api.showErrorMessage(message, 'Show Output').then((choice) => {
        if (choice) {
          this.deps.serverOutput.show(true);
        }
      });
      return;
    }
    controller.setServerState('idle');
    this.deps.serverOutput.appendLine(`Server ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    void api.setContext('toolgate-vscode.serverReady', true);
    try {
      await controller.syncProposals();
    } catch {
      // An older server without listProposals: the list simply starts empty.
    }
  }

  /** Tell the running server about new settings or a new API key. */
  async pushConfiguration(): Promise<void> {
    // A server that is starting may have read the options before this change: wait, then send.
    await this.starting;
    if (!this.client || !this.isRunning()) {
      return;
    }
    await this.client.sendNotification(DidChangeConfigurationNotification.type, {
      settings: { toolgate: await this.options() },
    });
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client) {
      try {
        await client.stop(5000);
      } catch {
        // Already gone: nothing to stop.
      }
    }
  }

  async restart(): Promise<void> {
    await this.starting;
    await this.stop();
    await this.start();
  }

  /** Toolgate: Reinstall Server: a new environment with the bundled server, then a new start. */
  async reinstall(): Promise<void> {
    const bundled = this.deps.bundled;
    if (!bundled) {
      void api.showInformationMessage('Toolgate: this build of the extension carries no server to reinstall.');
      return;
    }
    const settings = this.settings();
    if (settings.serverCommand.length > 0 || settings.pythonPath) {
      void api.showInformationMessage(
        'Toolgate: the server is started from toolgate.serverCommand or toolgate.pythonPath; clear them to use the server this extension carries.',
      );
      return;
    }
    await this.starting;
    await this.stop();
    this.deps.controller().setServerState('starting');
    const python = await bundled.reinstall();
    if (!python) {
      this.deps.controller().setServerState('error');
      return;
    }
    await this.start();
  }
}
