/** Reacts to what the server sends (proposals, events, save requests) and carries out the person's decisions. */
import * as api from './vscodeapi';
import type {
  AcceptResult,
  AgentEvent,
  AskResult,
  AskContext,
  PlanPayload,
  Proposal,
  ProposalResolved,
  Range,
  ReviewLoopEnd,
  ReviewResult,
  RunTestsResult,
  SaveDocumentsParams,
  SaveDocumentsResult,
  SessionChanged,
  UndoResult,
} from './protocol';
import { ServerCommand } from './protocol';
import type { ProposalStore } from './proposals';
import type { DiffReview } from './review';
import { SHOW_PROBLEMS } from './workbench';
import { toReport } from './diagnostics';
import type { RunState } from './status';
import { statusText, statusTooltip } from './status';
import { TranscriptFormatter, type TranscriptOutput } from './transcript';
import { runName } from './words';

/** The server as the controller needs it: its commands, and whether it runs. */
export interface ServerApi {
  /** Cancelling `token` withdraws the request: it then rejects with `CommandCancelled`. */
  execute<T>(command: string, args: unknown[], token?: api.CancellationToken): Promise<T>;
  isRunning(): boolean;
}

/** Who else wants what the server sends (the chat view). */
export interface ControllerListener {
  onEvent?(event: AgentEvent): void;
  onProposal?(proposal: Proposal): void;
  onProposalResolved?(resolved: ProposalResolved): void;
  onState?(state: RunState): void;
  onPlan?(plan: PlanPayload): void;
  /** A run was undone (from the chat view or a command), kept in `sessionId`'s conversation. */
  onUndo?(done: UndoResult, sessionId: string | undefined): void;
  /** Another process (a terminal, another editor) changed a session. */
  onSessionChanged?(changed: SessionChanged): void;
}

/**
 * How long to wait for other language servers to analyse an accepted edit. TypeScript took
 * more than 2.5 s on a loaded 2-core machine; the server waits longer than this for the report.
 */
export const DIAGNOSTICS_WAIT_MS = 4000;
/** Quiet time after the last diagnostics change before the report is sent. */
export const DIAGNOSTICS_SETTLE_MS = 400;

/** Wait until diagnostics for `uri` change and then stay quiet a moment, or until the timeout. */
export function waitForDiagnostics(
  uri: string,
  timeoutMs: number = DIAGNOSTICS_WAIT_MS,
  settleMs: number = DIAGNOSTICS_SETTLE_MS,
): Promise<void> {
  return new Promise((resolve) => {
    let settle: ReturnType<typeof setTimeout> | undefined;
    const finish = () => {
      clearTimeout(deadline);
      clearTimeout(settle);
      subscription.dispose();
      resolve();
    };
    const deadline = setTimeout(finish, timeoutMs);
    const subscription = api.onDidChangeDiagnostics((uris) => {
      if (uris.includes(uri) || uris.some((changed) => decodeURIComponent(changed) === decodeURIComponent(uri))) {
        clearTimeout(settle);
        settle = setTimeout(finish, settleMs);
      }
    });
  });
}

/** A review loop's end in one sentence: how it ended, after how many rounds, and the tests. */
export function reviewLoopSummary(end: ReviewLoopEnd): string {
  const rounds = end.rounds?.length ?? 0;
  // The reason of `not_approved` and `tests_failed` is what the rounds and the tests say next.
  const reason = end.reason && !['not_approved', 'tests_failed'].includes(end.status) ? ` (${end.reason})` : '';
  const parts = [`${end.status.replace(/_/g, ' ')}${reason}`];
  if (rounds) {
    const verdict = end.approved ? 'approved' : 'not approved';
    parts.push(`${verdict} after ${rounds} round${rounds === 1 ? '' : 's'}`);
  }
  const tests = end.tests;
  if (tests?.summary) {
    const s = tests.summary;
    parts.push(`tests: ${s.passed} passed, ${s.failed} failed, ${s.errors} errors`);
  } else if (tests?.error) {
    parts.push(`tests did not run: ${tests.error}`);
  }
  return parts.join('; ');
}

/** The state behind the UI: proposals, the active run, the transcript and the status bar. */
export class Controller {
  private readonly transcript: TranscriptFormatter;
  private state: RunState = 'starting';
  private runId: string | undefined;
  /** Runs that already ended: an ask's answer can arrive after its run_finished. */
  private readonly finishedRuns = new Set<string>();
  /** When this window saw each run (and each undo) start: messages name runs by their time. */
  private readonly runStarts = new Map<string, { at: number; undo: boolean }>();
  private finishProgress: (() => void) | undefined;
  private progressReport: ((message: string) => void) | undefined;
  private readonly listeners: ControllerListener[] = [];
  /** True while the chat view is on screen: it shows the run, so no notification is drawn. */
  chatVisible: () => boolean = () => false;
  /** The session the chat view shows: the Ask command continues it. */
  currentSession: () => string | undefined = () => undefined;

  constructor(
    readonly store: ProposalStore,
    private readonly server: ServerApi,
    private readonly review: DiffReview,
    private readonly output: TranscriptOutput,
    private readonly statusBar: { text: string; tooltip?: unknown; show(): void },
    private readonly openDiffMode: () => 'auto' | 'notify',
    secrets: () => readonly (string | undefined)[],
    private readonly waitDiagnostics: (uri: string) => Promise<void> = (uri) => waitForDiagnostics(uri),
  ) {
    this.transcript = new TranscriptFormatter(secrets);
    this.store.onDidChange(() => {
      this.render();
      void this.review.updateContext();
    });
    this.render();
  }

  /** Be told of events, proposals and state changes; returns the unsubscribe function. */
  addListener(listener: ControllerListener): () => void {
    this.listeners.push(listener);
    return () => {
      const index = this.listeners.indexOf(listener);
      if (index >= 0) {
        this.listeners.splice(index, 1);
      }
    };
  }

  private tell(call: (listener: ControllerListener) => void): void {
    for (const listener of this.listeners) {
      try {
        call(listener);
      } catch (error) {
        this.output.warn(`chat view: ${(error as Error).message}`);
      }
    }
  }

  /** The run in progress, if any. */
  get activeRunId(): string | undefined {
    return this.runId;
  }

  get runState(): RunState {
    return this.state;
  }

  /** The server started, stopped or failed. */
  setServerState(state: RunState): void {
    this.state = state;
    if (state !== 'running') {
      this.endProgress();
      this.runId = undefined;
    }
    if (state === 'stopped' || state === 'error') {
      this.store.clear();
    }
    this.render();
    this.tell((l) => l.onState?.(state));
  }

  /** toolgate/proposal: remember it, refresh its diff, and show it (or offer to). */
  async handleProposal(proposal: Proposal, refresh: (p: Proposal) => void = () => {}): Promise<void> {
    const isNew = this.store.upsert(proposal);
    refresh(proposal);
    if (!isNew || !this.store.get(proposal.id)) {
      return;
    }
    this.tell((l) => l.onProposal?.(proposal));
    if (proposal.status === 'pending') {
      // The file's problems before the change: the server tells the model only the new ones.
      void this.reportNow(proposal.uri);
    }
    const path = api.asRelativePath(proposal.uri);
    this.output.info(`  ${proposal.tool} proposes a change to ${path} (${proposal.hunks.length} hunk${proposal.hunks.length === 1 ? '' : 's'}), waiting for review`);
    this.output.debug(`proposal ${proposal.id} of run ${proposal.runId}`);
    if (this.openDiffMode() === 'auto' && !this.review.anyVisible()) {
      await this.review.open(proposal);
      return;
    }
    await this.notify(proposal, path);
  }

  private async notify(proposal: Proposal, path: string): Promise<void> {
    const why = proposal.why ? ` — ${proposal.why}` : '';
    const choice = await api.showInformationMessage(
      `Toolgate proposes ${proposal.tool} on ${path}${why}`,
      'View Diff',
      'Accept',
      'Reject',
    );
    if (!this.store.get(proposal.id)) {
      return;
    }
    if (choice === 'View Diff') {
      await this.review.open(proposal);
    } else if (choice === 'Accept') {
      await this.accept(proposal.id);
    } else if (choice === 'Reject') {
      await this.reject(proposal.id, undefined);
    }
  }

  /** toolgate/proposalResolved: forget it, close its diff, and report diagnostics after an accepted edit. */
  async handleProposalResolved(resolved: ProposalResolved): Promise<void> {
    const proposal = this.store.resolve(resolved);
    this.tell((l) => l.onProposalResolved?.(resolved));
    await this.review.close(resolved.id);
    const path = proposal ? api.asRelativePath(proposal.uri) : resolved.id;
    const reason = resolved.reason ? `: ${resolved.reason}` : '';
    this.output.info(`  the change to ${proposal ? path : 'a file'} was ${resolved.status.replace(/_/g, ' ')}${reason}`);
    this.output.debug(`proposal ${resolved.id} ${resolved.status}`);
    if (resolved.status === 'stale') {
      void api.showWarningMessage(`Toolgate: the proposal for ${path} no longer applies${reason}`);
    }
    if (proposal && (resolved.status === 'accepted' || resolved.status === 'partially_accepted')) {
      await this.reportDiagnostics([proposal.uri]);
    }
  }

  /** Send the server what every language server reports for these files (not its own diagnostics). */
  async reportDiagnostics(uris: string[]): Promise<void> {
    await Promise.all(uris.map((uri) => this.waitDiagnostics(uri)));
    await this.reportNow(...uris);
  }

  /** Report these files' diagnostics as they are now. */
  private async reportNow(...uris: string[]): Promise<void> {
    const reports = uris.map((uri) => toReport(uri, api.getDiagnostics(uri)));
    if (!this.server.isRunning()) {
      return;
    }
    try {
      await this.server.execute(ServerCommand.reportDiagnostics, reports);
    } catch (error) {
      this.output.warn(`could not report diagnostics: ${(error as Error).message}`);
    }
  }

  /** toolgate/event: transcript, run state and progress. */
  handleEvent(event: AgentEvent): void {
    for (const line of this.transcript.format(event)) {
      this.output[line.level](line.text);
    }
    if (event.type === 'run_started') {
      if (event.runId) {
        this.runStarts.set(event.runId, { at: Date.now(), undo: false });
      }
      this.runId = event.runId;
      this.state = 'running';
      this.startProgress(event.task ?? '');
    } else if (event.type === 'run_finished') {
      if (event.runId) {
        this.finishedRuns.add(event.runId);
      }
      if (!event.runId || event.runId === this.runId) {
        this.runId = undefined;
        this.state = 'idle';
        this.endProgress();
      }
      if (event.status && event.status !== 'completed' && event.status !== 'cancelled') {
        const reason = event.reason ? `: ${event.reason}` : '';
        void api
          .showWarningMessage(`Toolgate run ${event.status.replace(/_/g, ' ')}${reason}`, 'Show Transcript')
          .then((choice) => {
            if (choice) {
              this.output.show(true);
            }
          });
      }
    } else if (event.type === 'tool_call' && this.progressReport) {
      this.progressReport(`${event.tool ?? ''} (${event.decision ?? ''})`);
    }
    this.render();
    this.tell((l) => {
      l.onEvent?.(event);
      l.onState?.(this.state);
    });
  }

  /** toolgate/plan: a plan to review (from the chat view, or from a code action on a kept plan). */
  handlePlan(plan: PlanPayload): void {
    const gaps = plan.gaps?.length ?? 0;
    this.output.info(`Plan: ${plan.goal} — ${plan.status}${gaps ? `, ${gaps} gap${gaps === 1 ? '' : 's'}` : ''}`);
    this.output.debug(`plan ${plan.planId}`);
    this.tell((l) => l.onPlan?.(plan));
  }

  /** toolgate/sessionChanged: a session changed outside this window, for the chat view to follow. */
  handleSessionChanged(changed: SessionChanged): void {
    this.tell((l) => l.onSessionChanged?.(changed));
  }

  /** toolgate/reviewLoop: the loop's account in the transcript, and its end said plainly. */
  handleReviewLoop(end: ReviewLoopEnd): void {
    const summary = reviewLoopSummary(end);
    this.output.info(`Review loop: ${summary}`);
    this.output.debug(`review loop ${end.loopId}`);
    const text = `Toolgate review loop: ${summary}`;
    const shown =
      end.status === 'completed'
        ? api.showInformationMessage(text)
        : api.showWarningMessage(text, 'Show Problems', 'Show Transcript');
    void shown.then((choice) => {
      if (choice === 'Show Problems') {
        void api.executeCommand(SHOW_PROBLEMS);
      } else if (choice === 'Show Transcript') {
        this.output.show(true);
      }
    });
  }

  /** Have the model review the working tree's changes, the staged ones, or a pending proposal. */
  async reviewChanges(
    target: { staged?: boolean; proposalId?: string },
    token?: api.CancellationToken,
  ): Promise<ReviewResult | undefined> {
    return this.server.execute<ReviewResult>(ServerCommand.review, [target], token);
  }

  /** Start the review loop on a task (in the current session); answers its loop id. */
  async reviewLoop(task: string): Promise<string | undefined> {
    const sessionId = this.currentSession();
    const started = await this.server.execute<{ loopId: string }>(ServerCommand.reviewLoop, [
      sessionId ? { task, sessionId } : { task },
    ]);
    return started?.loopId;
  }

  /** toolgate/saveDocuments: save each buffer so tests run on the accepted text. */
  async handleSaveDocuments(params: SaveDocumentsParams): Promise<SaveDocumentsResult> {
    const saved: string[] = [];
    for (const uri of params.uris ?? []) {
      try {
        if (await api.saveDocument(uri)) {
          saved.push(uri);
        }
      } catch (error) {
        this.output.warn(`could not save ${uri}: ${(error as Error).message}`);
      }
    }
    return { saved };
  }

  /** Start a run (in `sessionId`, else in the client's current session). */
  async ask(task: string, context?: AskContext, sessionId?: string): Promise<string | undefined> {
    return (await this.askInSession(task, context, sessionId ?? this.currentSession()))?.runId;
  }

  /** A one-turn change of the selected lines (`toolgate.editSelection`); its run id. */
  async editSelection(uri: string, range: Range, instruction: string): Promise<string | undefined> {
    const argument: { uri: string; range: Range; instruction: string; sessionId?: string } = {
      uri,
      range,
      instruction,
    };
    const sessionId = this.currentSession();
    if (sessionId) {
      argument.sessionId = sessionId;
    }
    const result = await this.server.execute<AskResult>(ServerCommand.editSelection, [argument]);
    if (result?.runId && !this.runId && !this.finishedRuns.has(result.runId)) {
      this.runId = result.runId;
    }
    return result?.runId;
  }

  /** Start a run and answer its run id and session id. */
  async askInSession(
    task: string,
    context?: AskContext,
    sessionId?: string,
    newSession = false,
  ): Promise<AskResult | undefined> {
    const argument: { task: string; context?: AskContext; sessionId?: string; newSession?: boolean } = { task };
    if (context) {
      argument.context = context;
    }
    if (sessionId) {
      argument.sessionId = sessionId;
    } else if (newSession) {
      argument.newSession = true;
    }
    const result = await this.server.execute<AskResult>(ServerCommand.ask, [argument]);
    if (result?.runId && !this.runId && !this.finishedRuns.has(result.runId)) {
      this.runId = result.runId;
    }
    return result ?? undefined;
  }

  /** Run any of the server's commands. */
  execute<T>(command: string, args: unknown[]): Promise<T> {
    return this.server.execute<T>(command, args);
  }

  /** Accept a proposal, all of it or only some hunks. */
  async accept(id: string, hunks?: number[]): Promise<AcceptResult | undefined> {
    const args: unknown[] = hunks ? [id, hunks] : [id];
    return this.server.execute<AcceptResult>(ServerCommand.acceptProposal, args);
  }

  /** Reject a proposal; the reason goes to the model. */
  async reject(id: string, reason: string | undefined): Promise<void> {
    const args: unknown[] = reason ? [id, reason] : [id];
    await this.server.execute(ServerCommand.rejectProposal, args);
  }

  /** Record a CodeLens decision on one hunk; answer the server once every hunk is decided. */
  async decideHunk(id: string, index: number, accept: boolean): Promise<void> {
    const proposal = this.store.get(id);
    if (!proposal) {
      return;
    }
    const outcome = this.store.decideHunk(id, index, accept);
    if (!outcome.done) {
      return;
    }
    if (outcome.accepted.length === 0) {
      await this.reject(id, undefined);
    } else if (outcome.accepted.length === proposal.hunks.length) {
      await this.accept(id);
    } else {
      await this.accept(id, outcome.accepted);
    }
  }

  async acceptAll(): Promise<string[]> {
    const result = await this.server.execute<{ accepted: string[] }>(ServerCommand.acceptAll, []);
    return result?.accepted ?? [];
  }

  /** Ask the server for the pending proposals and replace the local list with them. */
  async syncProposals(): Promise<void> {
    const proposals = await this.server.execute<Proposal[]>(ServerCommand.listProposals, []);
    this.store.replaceAll(Array.isArray(proposals) ? proposals : []);
  }

  /** Run the project's tests through the server; failures arrive as diagnostics. */
  async runTests(command?: string, token?: api.CancellationToken): Promise<RunTestsResult | undefined> {
    return this.server.execute<RunTestsResult>(ServerCommand.runTests, [command ? { command } : {}], token);
  }

  /** Undo a run (default: the latest) from its checkpoint; a dry run only says what it would do. */
  async undoRun(args: { runId?: string; dryRun?: boolean; force?: boolean }): Promise<UndoResult | undefined> {
    // The conversation on screen keeps the undo, as a run of its own that can be undone.
    const sessionId = this.currentSession();
    const done = await this.server.execute<UndoResult>(ServerCommand.undoRun, [sessionId ? { ...args, sessionId } : args]);
    if (done && !args.dryRun && !done.dryRun) {
      if (done.undoRunId) {
        this.runStarts.set(done.undoRunId, { at: Date.now(), undo: true });
      }
      // However it was started, the conversation on screen shows the undo at once.
      this.tell((listener) => listener.onUndo?.(done, sessionId));
    }
    return done;
  }

  /** A run as a person names it: "the run at 14:02", "the undo at 14:05", "an earlier run". */
  runWords(runId: string): string {
    const start = this.runStarts.get(runId);
    return runName(start?.at, start?.undo ? 'undo' : 'run');
  }

  async stop(): Promise<boolean> {
    const args = this.runId ? [this.runId] : [];
    const result = await this.server.execute<{ cancelled: boolean }>(ServerCommand.cancel, args);
    return result?.cancelled === true;
  }

  private startProgress(task: string): void {
    this.endProgress();
    if (this.chatVisible()) {
      return; // The chat view shows the run and its Stop button.
    }
    const runId = this.runId;
    void api.withNotificationProgress('Toolgate', (progress, token) => {
      progress.report({ message: task.length > 80 ? `${task.slice(0, 80)}…` : task });
      this.progressReport = (message) => progress.report({ message });
      token.onCancellationRequested(() => {
        void this.server
          .execute(ServerCommand.cancel, runId ? [runId] : [])
          .catch((error: Error) => this.output.warn(`cancel failed: ${error.message}`));
      });
      return new Promise<void>((resolve) => {
        this.finishProgress = resolve;
      });
    });
  }

  private endProgress(): void {
    this.finishProgress?.();
    this.finishProgress = undefined;
    this.progressReport = undefined;
  }

  private render(): void {
    this.statusBar.text = statusText(this.state, this.store.size);
    this.statusBar.tooltip = statusTooltip(this.state, this.store.size);
    this.statusBar.show();
  }
}
