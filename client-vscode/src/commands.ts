/** The extension's own commands (prefix `toolgate-vscode.`); the server's `toolgate.*` commands are not registered here. */
import * as api from './vscodeapi';
import type { Controller } from './controller';
import type { Proposal, Range, ReviewResult, UndoResult } from './protocol';
import { CommandCancelled } from './protocol';
import type { DiffReview } from './review';
import { OWN_SOURCE } from './diagnostics';
import { SHOW_PROBLEMS } from './workbench';

/** Ids of the commands this extension registers. */
export const Command = {
  ask: 'toolgate-vscode.ask',
  acceptProposal: 'toolgate-vscode.acceptProposal',
  rejectProposal: 'toolgate-vscode.rejectProposal',
  acceptAll: 'toolgate-vscode.acceptAll',
  showPending: 'toolgate-vscode.showPending',
  stop: 'toolgate-vscode.stop',
  runTests: 'toolgate-vscode.runTests',
  setApiKey: 'toolgate-vscode.setApiKey',
  showTranscript: 'toolgate-vscode.showTranscript',
  restartServer: 'toolgate-vscode.restartServer',
  viewDiff: 'toolgate-vscode.viewDiff',
  openChat: 'toolgate-vscode.openChat',
  acceptHunk: 'toolgate-vscode.acceptHunk',
  rejectHunk: 'toolgate-vscode.rejectHunk',
  undoRun: 'toolgate-vscode.undoRun',
  reviewChanges: 'toolgate-vscode.reviewChanges',
  askWithReview: 'toolgate-vscode.askWithReview',
  editSelection: 'toolgate-vscode.editSelection',
} as const;


/** Key of the API key in SecretStorage. */
export const API_KEY_SECRET = 'toolgate.apiKey';

/** What the commands need besides the controller. */
export interface CommandDeps {
  controller: Controller;
  review: DiffReview;
  secrets: { store(key: string, value: string): Thenable<void>; delete(key: string): Thenable<void> };
  output: { show(preserveFocus?: boolean): void };
  /** Push the new API key to the running server. */
  onApiKeyChanged(): Promise<void>;
  restartServer(): Promise<void>;
  /** Wait for a starting server (starting it if needed); false when it does not start. */
  ensureServer(): Promise<boolean>;
  /** Reveal the chat view and put the cursor in its input. */
  openChat?(): void;
  /** How long Run Tests waits for its failures to reach Problems before it says they did not. */
  problemsWaitMs?: number;
}

/** How long the failures of a test run may take to reach Problems (they travel as notifications). */
export const PROBLEMS_WAIT_MS = 3000;

/** The failing files of a test run (workspace-relative or absolute), once each. */
function failingFiles(failures: unknown[]): string[] {
  const files = failures
    .map((failure) => (failure && typeof failure === 'object' ? (failure as { file?: unknown }).file : undefined))
    .filter((file): file is string => typeof file === 'string' && file.length > 0);
  return [...new Set(files)];
}

/** The failing files for which Problems holds no Toolgate diagnostic. */
export function filesMissingFromProblems(failures: unknown[]): string[] {
  return failingFiles(failures).filter((file) => {
    const uri = api.workspaceFileUri(file);
    return !uri || !api.getDiagnostics(uri).some((d) => d.source === OWN_SOURCE);
  });
}

/** Wait until Problems holds each failing file's diagnostics; the files still missing after `timeoutMs`. */
export async function waitForFailuresInProblems(failures: unknown[], timeoutMs: number): Promise<string[]> {
  const deadline = Date.now() + timeoutMs;
  let missing = filesMissingFromProblems(failures);
  while (missing.length && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    missing = filesMissingFromProblems(failures);
  }
  return missing;
}

/** A proposal as a quick pick row. */
interface ProposalItem extends api.QuickPickItem {
  proposal: Proposal;
}

function proposalItems(proposals: Proposal[]): ProposalItem[] {
  return proposals.map((proposal) => ({
    label: `${proposal.tool}: ${api.asRelativePath(proposal.uri)}`,
    description: `${proposal.hunks.length} hunk${proposal.hunks.length === 1 ? '' : 's'}${proposal.isNewFile ? ', new file' : ''}`,
    detail: proposal.why ?? undefined,
    proposal,
  }));
}

/** The proposal an argument names: its id, the proposal itself, or the uri of its diff. */
function namedProposal(deps: Pick<CommandDeps, 'controller' | 'review'>, arg: unknown): Proposal | undefined {
  const store = deps.controller.store;
  if (typeof arg === 'string') {
    return store.get(arg);
  }
  if (arg && typeof arg === 'object') {
    if ('scheme' in arg && 'query' in arg) {
      const matches = deps.review.proposalsFor(arg as { scheme: string; query: string; toString(): string });
      return matches.length === 1 ? matches[0] : undefined;
    }
    if ('id' in arg && typeof (arg as { id: unknown }).id === 'string') {
      return store.get((arg as { id: string }).id);
    }
  }
  return undefined;
}

/**
 * Which proposal a command means: an id argument, the uri of the editor it was invoked from,
 * the active diff, the only pending proposal, or one the person picks.
 */
export async function resolveProposal(
  deps: Pick<CommandDeps, 'controller' | 'review'>,
  arg: unknown,
  verb: string,
): Promise<Proposal | undefined> {
  const { controller, review } = deps;
  const store = controller.store;
  const named = namedProposal(deps, arg);
  if (named || typeof arg === 'string') {
    return named;
  }
  const active = review.activeProposalId();
  if (active) {
    return store.get(active);
  }
  const pending = store.pending();
  if (pending.length === 0) {
    void api.showInformationMessage('Toolgate: no proposal is waiting for review.');
    return undefined;
  }
  if (pending.length === 1) {
    return pending[0];
  }
  const picked = await api.showQuickPick(proposalItems(pending), {
    placeHolder: `Which proposal do you want to ${verb}?`,
  });
  return picked?.proposal;
}

/**
 * Undo a run (default: the latest): say what it would restore, ask, then undo through the
 * editor. Answers what the undo did; undefined when nothing was undone (nothing left, or the
 * person said no).
 */
export async function undoRunAfterAsking(controller: Controller, runId?: string): Promise<UndoResult | undefined> {
  const plan = await controller.undoRun({ runId, dryRun: true });
  const changes = plan?.files.filter((f) => f.action === 'restore' || f.action === 'remove') ?? [];
  if (!plan || changes.length === 0) {
    const what = plan ? controller.runWords(plan.runId) : 'the last run';
    void api.showInformationMessage(`Toolgate: ${what} has nothing left to undo.`);
    return undefined;
  }
  const what = controller.runWords(plan.runId);
  const names = changes.map((f) => `${f.action === 'remove' ? 'remove' : 'restore'} ${f.path}`).join(', ');
  const choice = await api.showWarningMessage(`Toolgate: undo ${what}? It will ${names}.`, 'Undo');
  if (choice !== 'Undo') {
    return undefined;
  }
  const done = await controller.undoRun({ runId: plan.runId });
  const notes = [`Toolgate: undid ${what}.`, ...undoNotes(done)];
  const left = done?.files.some((f) => f.action === 'changed_since');
  void (left ? api.showWarningMessage(notes.join(' ')) : api.showInformationMessage(notes.join(' ')));
  return done;
}

/** What an undo left alone and what it cannot do (commits), as sentences. */
export function undoNotes(done: UndoResult | undefined): string[] {
  const notes: string[] = [];
  const left = done?.files.filter((f) => f.action === 'changed_since').map((f) => f.path) ?? [];
  if (left.length) {
    notes.push(`Left alone (changed since the run): ${left.join(', ')}.`);
  }
  if (done?.revert) {
    notes.push(`Note: ${done.revert}.`);
  }
  return notes;
}

/** What a review looks at, as a quick pick row. */
interface ReviewTargetItem extends api.QuickPickItem {
  target: { staged?: boolean; proposalId?: string };
  what: string;
}

/**
 * What Review Changes reviews: the proposal it was invoked on (an id, or the proposal's diff),
 * else the person's pick of the working tree, the staged changes or a pending proposal.
 */
export function reviewTarget(
  deps: Pick<CommandDeps, 'controller' | 'review'>,
  arg: unknown,
): Thenable<ReviewTargetItem | undefined> {
  const named = namedProposal(deps, arg);
  if (named) {
    return Promise.resolve(proposalTarget(named));
  }
  const items: ReviewTargetItem[] = [
    { label: 'Working tree', description: 'every change against HEAD', target: {}, what: 'the working tree' },
    { label: 'Staged', description: 'what git commit would commit', target: { staged: true }, what: 'the staged changes' },
    ...deps.controller.store.pending().map(proposalTarget),
  ];
  return api.showQuickPick(items, { title: 'Toolgate: Review Changes', placeHolder: 'What should the model review?' });
}

function proposalTarget(proposal: Proposal): ReviewTargetItem {
  const path = api.asRelativePath(proposal.uri);
  return {
    label: `Proposed ${proposal.tool}: ${path}`,
    description: 'before you accept it',
    target: { proposalId: proposal.id },
    what: `the proposed ${proposal.tool} on ${path}`,
  };
}

/** Say how a review came out; its comments are in Problems, on the lines they are about. */
export async function showReview(result: ReviewResult, what: string): Promise<void> {
  const text = `Toolgate review of ${what}: ${result.summary}`;
  if (!result.comments.length) {
    void api.showInformationMessage(text);
    return;
  }
  const placed = result.diagnostics ?? result.comments.length;
  const note = placed < result.comments.length ? ` (${result.comments.length - placed} on files outside the workspace, in the transcript)` : '';
  const choice = await (result.approved ? api.showInformationMessage : api.showWarningMessage)(`${text}${note}`, 'Show Problems');
  if (choice) {
    await api.executeCommand(SHOW_PROBLEMS);
  }
}

async function guarded(deps: CommandDeps, action: () => Promise<unknown>): Promise<void> {
  if (!(await deps.ensureServer())) {
    const choice = await api.showErrorMessage(
      'Toolgate: the server did not start (see the output channel "Toolgate Server").',
      'Restart Server',
      'Show Transcript',
    );
    if (choice === 'Restart Server') {
      await deps.restartServer();
    } else if (choice === 'Show Transcript') {
      deps.output.show(true);
    }
    return;
  }
  try {
    await action();
  } catch (error) {
    if (error instanceof CommandCancelled) {
      api.setStatusBarMessage('Toolgate: cancelled', 5000);
      return;
    }
    void api.showErrorMessage(`Toolgate: ${(error as Error).message}`);
  }
}

/** Every command handler, by id; `registerCommands` registers them, tests call them directly. */
export function commandHandlers(deps: CommandDeps): Record<string, (...args: unknown[]) => Promise<void>> {
  const { controller, review } = deps;
  return {
    [Command.ask]: () =>
      guarded(deps, async () => {
        const selection = api.activeSelection();
        const task = await api.showInputBox({
          title: 'Toolgate: Ask Agent',
          prompt: selection && !selection.empty
            ? 'What should the agent do? The selected text goes along as context.'
            : 'What should the agent do?',
          placeHolder: 'e.g. Make the failing test in tests/test_calc.py pass',
          ignoreFocusOut: true,
        });
        if (!task?.trim()) {
          return;
        }
        const context = selection
          ? selection.empty
            ? { uri: selection.uri }
            : { uri: selection.uri, range: selection.range, text: selection.text }
          : undefined;
        await controller.ask(task.trim(), context);
      }),
    [Command.editSelection]: (arg) =>
      guarded(deps, async () => {
        // From the server's code action ({uri, range}), else the editor's own selection.
        const given = arg as { uri?: string; range?: Range } | undefined;
        const selection = api.activeSelection();
        const uri = given?.uri ?? selection?.uri;
        const range = given?.range ?? (selection && !selection.empty ? selection.range : undefined);
        if (!uri || !range) {
          await api.showWarningMessage('Toolgate: select the lines to change first.');
          return;
        }
        const instruction = await api.showInputBox({
          title: 'Toolgate: Edit Selection',
          prompt: 'How should the selected lines change? The change comes back as a diff to review.',
          placeHolder: 'e.g. Handle an empty list',
          ignoreFocusOut: true,
        });
        if (!instruction?.trim()) {
          return;
        }
        await controller.editSelection(uri, range, instruction.trim());
      }),
    [Command.acceptProposal]: (arg) =>
      guarded(deps, async () => {
        const proposal = await resolveProposal(deps, arg, 'accept');
        if (proposal) {
          await controller.accept(proposal.id);
        }
      }),
    [Command.rejectProposal]: (arg) =>
      guarded(deps, async () => {
        const proposal = await resolveProposal(deps, arg, 'reject');
        if (!proposal) {
          return;
        }
        const reason = await api.showInputBox({
          title: `Reject ${proposal.tool}: ${api.asRelativePath(proposal.uri)}`,
          prompt: 'Why? (optional — the agent reads this)',
          ignoreFocusOut: true,
        });
        if (reason === undefined) {
          return; // Escape: the person changed their mind.
        }
        await controller.reject(proposal.id, reason.trim() || undefined);
      }),
    [Command.acceptAll]: () =>
      guarded(deps, async () => {
        const accepted = await controller.acceptAll();
        api.setStatusBarMessage(`Toolgate: accepted ${accepted.length} proposal(s)`, 4000);
      }),
    [Command.showPending]: () =>
      guarded(deps, async () => {
        await controller.syncProposals();
        const pending = controller.store.pending();
        if (pending.length === 0) {
          void api.showInformationMessage('Toolgate: no proposal is waiting for review.');
          return;
        }
        const picked = await api.showQuickPick(proposalItems(pending), {
          placeHolder: 'Pending proposals — pick one to review its diff',
        });
        if (picked) {
          await review.open(picked.proposal);
        }
      }),
    [Command.viewDiff]: (arg) =>
      guarded(deps, async () => {
        const proposal = await resolveProposal(deps, arg, 'view');
        if (proposal) {
          await review.open(proposal);
        }
      }),
    [Command.acceptHunk]: (id, index) =>
      guarded(deps, () => controller.decideHunk(String(id), Number(index), true)),
    [Command.rejectHunk]: (id, index) =>
      guarded(deps, () => controller.decideHunk(String(id), Number(index), false)),
    [Command.stop]: () =>
      guarded(deps, async () => {
        const cancelled = await controller.stop();
        if (!cancelled) {
          void api.showInformationMessage('Toolgate: no run to stop.');
        }
      }),
    [Command.undoRun]: (arg) => guarded(deps, () => undoRunAfterAsking(controller, typeof arg === 'string' ? arg : undefined)),
    [Command.reviewChanges]: (arg) =>
      guarded(deps, async () => {
        const picked = await reviewTarget(deps, arg);
        if (!picked) {
          return;
        }
        const result = await api.withNotificationProgress(
          `Toolgate: the model is reviewing ${picked.what}…`,
          (_progress, token) => controller.reviewChanges(picked.target, token),
        );
        if (result) {
          await showReview(result, picked.what);
        }
      }),
    [Command.askWithReview]: () =>
      guarded(deps, async () => {
        const task = await api.showInputBox({
          title: 'Toolgate: Ask Agent with Review',
          prompt: 'What should the agent do? The model reviews each change and the agent revises it, then the tests run.',
          placeHolder: 'e.g. Add a half() function to calc.py, with a test',
          ignoreFocusOut: true,
        });
        if (task?.trim()) {
          await controller.reviewLoop(task.trim());
        }
      }),
    [Command.runTests]: () =>
      guarded(deps, async () => {
        const result = await api.withNotificationProgress('Toolgate: running tests', (_progress, token) =>
          deps.controller.runTests(undefined, token),
        );
        const s = result?.summary;
        if (!s) {
          return;
        }
        const text = `Toolgate tests: ${s.passed} passed, ${s.failed} failed, ${s.errors} errors, ${s.skipped} skipped`;
        if (result.notRun) {
          // No results, none collected, a timeout: say what happened, never a pass, rather
          // than leave an empty Problems panel unexplained.
          void api.showWarningMessage(`Toolgate tests did not run: ${result.notRun}`);
          return;
        }
        if (s.failed + s.errors > 0) {
          // Never an empty Problems panel left unexplained: say which failures did not reach it.
          const missing = await waitForFailuresInProblems(result.failures ?? [], deps.problemsWaitMs ?? PROBLEMS_WAIT_MS);
          const note = missing.length
            ? `. Problems shows no failure for ${missing.join(', ')} (toolgate.trace.server: verbose shows what the server published)`
            : '';
          const choice = await api.showWarningMessage(`${text}${note}`, 'Show Problems');
          if (choice) {
            await api.executeCommand(SHOW_PROBLEMS);
          }
        } else {
          void api.showInformationMessage(text);
        }
      }),
    [Command.setApiKey]: async () => {
      const key = await api.showInputBox({
        title: 'Toolgate: API key',
        prompt: 'API key for the chat API (kept in the editor\'s secret storage). Leave empty to remove it.',
        password: true,
        ignoreFocusOut: true,
      });
      if (key === undefined) {
        return;
      }
      if (key.trim()) {
        await deps.secrets.store(API_KEY_SECRET, key.trim());
      } else {
        await deps.secrets.delete(API_KEY_SECRET);
      }
      await deps.onApiKeyChanged();
      void api.showInformationMessage(key.trim() ? 'Toolgate: API key saved.' : 'Toolgate: API key removed.');
    },
    [Command.showTranscript]: async () => {
      deps.output.show(false);
    },
    [Command.restartServer]: () => deps.restartServer(),
    [Command.openChat]: async () => {
      deps.openChat?.();
    },
  };
}

/** Register every command; returns their disposables. */
export function registerCommands(deps: CommandDeps): api.Disposable[] {
  return Object.entries(commandHandlers(deps)).map(([id, handler]) => api.registerCommand(id, handler));
}
