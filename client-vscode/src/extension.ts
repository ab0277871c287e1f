/** Entry point: builds the pieces, registers commands and providers, starts the server. */
import path from 'node:path';
import * as api from './vscodeapi';
import { ServerManager } from './client';
import { Controller } from './controller';
import { API_KEY_SECRET, Command, registerCommands, undoRunAfterAsking } from './commands';
import { HunkCodeLensProvider } from './codeLens';
import { PROPOSAL_SCHEME } from './protocol';
import { ProposalStore } from './proposals';
import { DiffReview, ProposalContentProvider } from './review';
import { redactingChannel } from './redactingChannel';
import { needsRestart, readSettings } from './settings';
import { ChatController } from './chat/chatController';
import { CHAT_VIEW_ID, ChatViewProvider } from './chat/chatView';
import { BundledServer } from './bundledServer';
import { runProcess } from './python';
import { bundledWheel, ServerEnvironment, streamProcess } from './serverEnv';
import { chatOpenCheck, registerSetupCommands, SetupCommand, setupHandlers, WALKTHROUGH } from './setup';

let manager: ServerManager | undefined;

/** globalState key: the walkthrough was opened once already. */
const WALKTHROUGH_SHOWN = 'toolgate.walkthroughShown';

/** Called by the editor when the extension activates. */
export async function activate(context: api.ExtensionContext): Promise<void> {
  // The person's transcript at the info level; the protocol's detail only at the debug level.
  const transcript = api.createLogOutputChannel('Toolgate');
  // The key as last stored here: a read of SecretStorage just after a store may not see it yet,
  // and a server told no key keeps its old one.
  let cachedKey = await context.secrets.get(API_KEY_SECRET);
  const secrets = {
    store: async (key: string, value: string) => {
      await context.secrets.store(key, value);
      if (key === API_KEY_SECRET) {
        cachedKey = value;
      }
    },
    delete: async (key: string) => {
      await context.secrets.delete(key);
      if (key === API_KEY_SECRET) {
        cachedKey = undefined;
      }
    },
  };
  // The protocol trace shows initializationOptions, so the channel masks the API key.
  const serverOutput = redactingChannel(api.createLogOutputChannel('Toolgate Server'), () => [cachedKey]);
  const statusBar = api.createStatusBarItem(50);
  statusBar.command = Command.showPending;
  const apiKey = async () => cachedKey;

  // The manager reaches the controller through a getter: each needs the other.
  const store = new ProposalStore();
  const review = new DiffReview(store);
  const contentProvider = new ProposalContentProvider(store);
  const holder: { controller?: Controller } = {};
  // The server the .vsix carries, built from the same commit and pinned to this version.
  const version = String((context.extension.packageJSON as { version?: unknown }).version ?? '');
  const wheel = bundledWheel(path.join(context.extensionPath, 'server'), version);
  const bundled = wheel
    ? new BundledServer({
        env: new ServerEnvironment({
          storageDir: context.globalStorageUri.fsPath,
          wheel,
          log: (line) => serverOutput.appendLine(line),
        }),
        lookupPython: api.pythonExtensionInterpreter,
        run: runProcess,
        output: serverOutput,
      })
    : undefined;
  const serverManager = new ServerManager({
    serverOutput,
    apiKey,
    controller: () => holder.controller as Controller,
    refreshProposal: (proposal) => contentProvider.refresh(proposal),
    bundled,
  });
  manager = serverManager;
  const controller = new Controller(
    store,
    serverManager,
    review,
    transcript,
    statusBar,
    () => readSettings(api.getSetting).openDiff,
    () => [cachedKey],
  );
  holder.controller = controller;
  const lenses = new HunkCodeLensProvider(store);
  const chat = new ChatController({
    controller,
    ensureServer: () => serverManager.ensureRunning(),
    openDiff: (proposal) => review.open(proposal),
    undoRun: (runId) => undoRunAfterAsking(controller, runId),
    memento: context.workspaceState,
  });
  const setupReport = api.createOutputChannel('Toolgate Setup');
  const setup = setupHandlers({
    server: serverManager,
    serverProblem: () => bundled?.problem,
    ask: async (task) => {
      await controller.ask(task);
    },
    secrets,
    serverOutput,
    report: setupReport,
    stream: streamProcess,
  });
  // Opening the chat checks the model once, so nobody meets a bare error on the first ask.
  const chatOpened = chatOpenCheck(async () => setup[SetupCommand.testConnection]({ quiet: true }));
  const chatView = new ChatViewProvider(context.extensionUri, chat, chatOpened);
  controller.chatVisible = () => chatView.visible();
  controller.currentSession = () => chat.conversation.sessionId;

  context.subscriptions.push(
    transcript,
    serverOutput,
    setupReport,
    ...registerSetupCommands(setup),
    statusBar,
    contentProvider,
    lenses,
    api.registerTextDocumentContentProvider(PROPOSAL_SCHEME, contentProvider),
    api.registerCodeLensProvider([{ scheme: 'file' }, { scheme: PROPOSAL_SCHEME }], lenses),
    api.onDidChangeTabs(() => void review.updateContext()),
    api.registerWebviewViewProvider(CHAT_VIEW_ID, chatView),
    // The chat's chip follows the file and selection the person looks at.
    api.onDidChangeActiveEditor(() => chat.pointingChanged()),
    ...registerCommands({
      controller,
      review,
      secrets,
      output: transcript,
      onApiKeyChanged: () => serverManager.pushConfiguration(),
      restartServer: () => serverManager.restart(),
      ensureServer: () => serverManager.ensureRunning(),
      openChat: () => {
        void api.executeCommand(`${CHAT_VIEW_ID}.focus`).then(() => chatView.focus());
      },
    }),
    // A key set in another window reaches this window's server too.
    context.secrets.onDidChange(async (change) => {
      if (change.key === API_KEY_SECRET) {
        cachedKey = await context.secrets.get(API_KEY_SECRET);
        await serverManager.pushConfiguration();
      }
    }),
    api.onDidChangeConfiguration((affects) => {
      if (!affects('toolgate')) {
        return;
      }
      if (needsRestart(affects)) {
        void serverManager.restart();
      } else {
        void serverManager.pushConfiguration();
      }
    }),
    api.onDidGrantWorkspaceTrust(() => {
      void serverManager.restart().then(() =>
        api.showInformationMessage('Toolgate: the workspace is trusted now; the agent may run tests and git.'),
      );
    }),
    { dispose: () => void serverManager.stop() },
  );
  if (!api.isTrusted()) {
    transcript.info('Restricted workspace: the agent may read and propose edits; tests, git and manifest tools are refused.');
  }
  // Not awaited: activation must not wait for the interpreter check and the server's start.
  void serverManager.start();
  // The first time, with no model chosen yet, the walkthrough opens by itself.
  if (!context.globalState.get<boolean>(WALKTHROUGH_SHOWN) && !api.isSettingSet('baseUrl')) {
    await context.globalState.update(WALKTHROUGH_SHOWN, true);
    void api.executeCommand('workbench.action.openWalkthrough', WALKTHROUGH, false);
  }
  await review.updateContext();
}

/** Called by the editor on shutdown. */
export async function deactivate(): Promise<void> {
  await manager?.stop();
  manager = undefined;
}
