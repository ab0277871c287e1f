/**
 * The chat view's logic: what the webview asks for becomes server commands, and what the server
 * sends becomes the state the webview draws. The webview itself only draws and reports clicks.
 */
import * as api from '../vscodeapi';
import type { Controller, ControllerListener } from '../controller';
import type {
  AgentEvent,
  Customization,
  LoadedSession,
  PlanPayload,
  Proposal,
  ProposalResolved,
  RewindResult,
  ScaffoldResult,
  SessionChanged,
  SessionInfo,
  UndoResult,
} from '../protocol';
import { ServerCommand } from '../protocol';
import type { RunState } from '../status';
import { Command, undoNotes } from '../commands';
import { SHOW_PROBLEMS } from '../workbench';
import { Conversation } from './conversation';
import { withHunkDecisions } from './hunkDecisions';
import { clockTime } from '../words';
import { askContext, mentionItems, pickMention, pointingChip } from './pointing';
import { chooseRewind, rewindNote } from './rewind';
import { VIEW_COMMANDS } from './messages';
import type {
  ChatState,
  CustomizationPanel,
  FromWebview,
  PlanCard,
  RunStatus,
  SessionChoice,
  SlashCommand,
  ToWebview,
} from './messages';

/** Key in the workspace state: the session the view showed last. */
export const CURRENT_SESSION_KEY = 'toolgate.chat.sessionId';

/** What the chat controller needs from the rest of the extension. */
export interface ChatDeps {
  controller: Controller;
  /** Wait for a starting server (starting it if needed); false when it does not start. */
  ensureServer(): Promise<boolean>;
  openDiff(proposal: Proposal): Promise<void>;
  /** Undo a run after showing what it puts back (the Undo Last Run command's flow); undefined: not undone. */
  undoRun(runId: string): Promise<UndoResult | undefined>;
  memento: { get<T>(key: string): T | undefined; update(key: string, value: unknown): Thenable<void> };
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** `/NAME rest` as its name and the rest; undefined for any other text. */
export function parseSlash(text: string): { name: string; rest: string } | undefined {
  const match = /^\/([^\s/]+)(?:\s+([\s\S]*))?$/.exec(text.trim());
  return match ? { name: match[1], rest: (match[2] ?? '').trim() } : undefined;
}

/** The `/` menu: the view's own commands, then the project's prompt commands. */
export function slashCommands(customization: Customization | undefined): SlashCommand[] {
  const own = new Set(VIEW_COMMANDS.map((c) => c.name));
  const prompts = (customization?.commands ?? [])
    .filter((c) => typeof c?.name === 'string' && !own.has(c.name))
    .map((c) => ({
      name: c.name,
      description: c.description || '',
      ...(c.argumentHint ? { argumentHint: c.argumentHint } : {}),
      source: c.file || c.source || 'prompt file',
    }));
  return [...VIEW_COMMANDS, ...prompts];
}

/** Holds the view's conversation and session list and answers the webview's messages. */
export class ChatController implements ControllerListener {
  readonly conversation = new Conversation();
  private sessions: SessionChoice[] = [];
  private title = 'New conversation';
  private status: RunStatus = { state: 'starting' };
  private error: string | undefined;
  private post: ((message: ToWebview) => void) | undefined;
  private restored = false;
  private pendingPost: ReturnType<typeof setTimeout> | undefined;
  /** Actions of the webview being carried out now. */
  private acting = 0;
  /** Counts what this window starts, so a reload that raced one of them is not drawn. */
  private generation = 0;
  /** The session on screen was changed elsewhere while this window was busy: load it once idle. */
  private outdated = false;
  private customization: CustomizationPanel = { open: false, loading: false };

  constructor(private readonly deps: ChatDeps) {
    deps.controller.addListener(this);
    // A hunk decided in the diff editor's CodeLens shows on the card too.
    deps.controller.store.onDidChange(() => this.changed());
  }

  /** The webview is ready to draw (again, after a reload of the view). */
  attach(post: (message: ToWebview) => void): void {
    this.post = post;
    this.flush();
  }

  detach(): void {
    this.post = undefined;
  }

  /** What the webview draws now. */
  state(): ChatState {
    return {
      sessionId: this.conversation.sessionId,
      title: this.title,
      sessions: this.sessions,
      entries: withHunkDecisions(this.conversation.list(), (id, index) => this.deps.controller.store.hunkDecision(id, index)),
      status: this.status,
      commands: slashCommands(this.customization.data),
      customization: { ...this.customization },
      error: this.error,
      pointing: pointingChip(),
    };
  }

  /** The active editor or its selection changed: the chip follows. */
  pointingChanged(): void {
    this.changed();
  }

  /** Draw soon: streamed text arrives many times a second, the view redraws at most every 50 ms. */
  private changed(): void {
    if (this.pendingPost === undefined) {
      this.pendingPost = setTimeout(() => this.flush(), 50);
    }
  }

  /** Draw now. */
  flush(): void {
    if (this.pendingPost !== undefined) {
      clearTimeout(this.pendingPost);
      this.pendingPost = undefined;
    }
    this.post?.({ type: 'state', state: this.state() });
  }

  // ---- what the server sends (through the controller)

  onEvent(event: AgentEvent): void {
    if (event.type === 'run_started') {
      this.generation++;
    }
    if (event.type === 'run_started' && this.conversation.belongs(event)) {
      this.status = { state: 'running', detail: 'thinking' };
    } else if (event.type === 'tool_call' && this.conversation.belongs(event)) {
      this.status = { state: 'running', detail: `${event.tool ?? ''}` };
    } else if (event.type === 'run_finished') {
      this.status = { state: 'idle', detail: String(event.status ?? 'completed').replace(/_/g, ' ') };
      if (event.sessionId && event.sessionId === this.conversation.sessionId) {
        void this.refreshSessions();
      }
    }
    if (this.conversation.apply(event)) {
      this.changed();
    } else if (event.type === 'run_started' || event.type === 'run_finished') {
      this.changed();
    }
  }

  onProposal(proposal: Proposal): void {
    if (this.conversation.addProposal(proposal, proposal.path ?? api.asRelativePath(proposal.uri))) {
      this.flush();
    }
  }

  onPlan(plan: PlanPayload): void {
    if (plan?.sessionId && this.conversation.sessionId && plan.sessionId !== this.conversation.sessionId) {
      return; // kept in another session: it shows when that one is loaded
    }
    this.rememberGaps(plan);
    if (!this.conversation.sessionId && plan?.sessionId) {
      // The plan started the conversation: the view continues the session that keeps it.
      this.conversation.sessionId = plan.sessionId;
      void this.deps.memento.update(CURRENT_SESSION_KEY, plan.sessionId);
      void this.refreshSessions();
    }
    if (this.conversation.addPlan(plan)) {
      this.flush();
    }
  }

  private rememberGaps(plan: PlanPayload): void {
    for (const gap of plan?.gaps ?? []) {
      const args = gap.scaffold?.arguments?.[0];
      if (args && typeof args === 'object') {
        this.gapArguments.set(`${plan.planId}/${gap.step_id}`, args as Record<string, unknown>);
      }
    }
  }

  onProposalResolved(resolved: ProposalResolved): void {
    if (this.conversation.resolveProposal(resolved)) {
      this.flush();
    }
  }

  onUndo(done: UndoResult, sessionId: string | undefined): void {
    // The undo is kept in the session it was sent with; a run of this conversation shows it too.
    const here = sessionId !== undefined && sessionId === this.conversation.sessionId;
    if (here || this.conversation.hasRunEnd(done.runId)) {
      this.showUndo(done);
      this.flush();
    }
  }

  /** An undo's outcome in the conversation: the undone run's line, and the undo's own line. */
  private showUndo(done: UndoResult): void {
    const restored = done.files.filter((f) => f.action === 'restore' || f.action === 'remove').map((f) => f.path);
    const at = clockTime(Date.now());
    const note = [`Undone at ${at}: put back ${restored.join(', ') || 'nothing'}.`, ...undoNotes(done)].join(' ');
    this.conversation.setUndo(done.runId, 'undone', note);
    // Undoing an undo brings the run it undid back, so that run can be undone again; if that
    // run was itself an undo (a redo being undone), what it undid is undone again, and so on.
    let undoing = done.runId;
    let back = true;
    for (let target = this.conversation.undoneBy(undoing); target; target = this.conversation.undoneBy(undoing)) {
      if (back) {
        this.conversation.setUndo(target, 'available', `Its changes were brought back at ${at}.`);
      } else {
        this.conversation.setUndo(target, 'undone', `Undone again at ${at}.`);
      }
      undoing = target;
      back = !back;
    }
    if (done.undoRunId) {
      this.conversation.addUndoRun(done.undoRunId, done.runId, restored);
    }
  }

  onState(state: RunState): void {
    if (state !== this.status.state) {
      this.status = { state, detail: state === 'running' ? this.status.detail : undefined };
      this.changed();
    }
    if (state === 'idle' && !this.restored && this.post) {
      void this.restore();
    }
    this.settle();
  }

  /**
   * A session changed outside this window (a terminal's turn or undo, another editor): the
   * list follows, and so does the conversation on screen, at once when this window is idle,
   * else when it is idle again. Its own runs' writes are never reported.
   */
  onSessionChanged(changed: SessionChanged): void {
    if (!this.restored) {
      return; // the view has not loaded anything yet: what it loads will be current
    }
    void this.refreshSessions();
    if (changed.sessionId !== this.conversation.sessionId) {
      return;
    }
    if (changed.deleted) {
      this.conversation.load(undefined, []);
      this.title = 'New conversation';
      this.error = 'This conversation was deleted outside this window.';
      void this.deps.memento.update(CURRENT_SESSION_KEY, undefined);
      this.flush();
      return;
    }
    this.outdated = true;
    this.settle();
  }

  private busy(): boolean {
    return this.acting > 0 || ['running', 'planning', 'starting'].includes(this.status.state);
  }

  /** Load the session on screen again if it changed elsewhere and nothing here is under way. */
  private settle(): void {
    if (this.outdated && !this.busy()) {
      this.outdated = false;
      void this.reload();
    }
  }

  private async reload(): Promise<void> {
    const sessionId = this.conversation.sessionId;
    if (!sessionId) {
      return;
    }
    const generation = this.generation;
    let session: LoadedSession;
    try {
      session = await this.fetchSession(sessionId);
    } catch (error) {
      this.error = `Could not load the conversation again: ${errorText(error)}`;
      this.flush();
      return;
    }
    if (generation !== this.generation || this.busy() || sessionId !== this.conversation.sessionId) {
      // Something started here meanwhile: what it draws is current until it ends.
      this.outdated = sessionId === this.conversation.sessionId;
      this.settle();
      return;
    }
    await this.show(session, sessionId);
    this.flush();
  }

  // ---- sessions

  /** Show the session the view showed last, else the most recent one (once per server start). */
  async restore(): Promise<void> {
    this.restored = true;
    await this.refreshSessions();
    const remembered = this.deps.memento.get<string>(CURRENT_SESSION_KEY);
    const target = this.sessions.find((s) => s.id === remembered)?.id ?? this.sessions[0]?.id;
    if (target) {
      await this.load(target);
    }
    this.flush();
    await this.refreshCustomization();
  }

  /**
   * Ask the server what customizes the agent here (the `/` menu's prompt commands and the
   * Customization panel). A failure shows in the panel; the view's own commands stay.
   */
  async refreshCustomization(): Promise<void> {
    this.customization.loading = true;
    this.changed();
    try {
      this.customization.data = await this.deps.controller.execute<Customization>(ServerCommand.customization, []);
      this.customization.error = undefined;
    } catch (error) {
      this.customization.error = `Could not read the customization: ${errorText(error)}`;
    } finally {
      this.customization.loading = false;
      this.changed();
    }
  }

  private async refreshSessions(): Promise<void> {
    try {
      const result = await this.deps.controller.execute<{ sessions?: SessionInfo[] }>(ServerCommand.listSessions, [{}]);
      this.sessions = (result?.sessions ?? []).map((s) => ({
        id: s.id,
        title: s.title || 'Untitled',
        turns: s.turns,
        lastActivity: s.lastActivity,
      }));
      const current = this.sessions.find((s) => s.id === this.conversation.sessionId);
      if (current) {
        this.title = current.title;
      }
    } catch (error) {
      this.error = `Could not list the sessions: ${errorText(error)}`;
    }
    this.changed();
  }

  private async load(sessionId: string): Promise<void> {
    await this.show(await this.fetchSession(sessionId), sessionId);
  }

  private fetchSession(sessionId: string): Promise<LoadedSession> {
    return this.deps.controller.execute<LoadedSession>(ServerCommand.loadSession, [{ sessionId }]);
  }

  private async show(session: LoadedSession, sessionId: string): Promise<void> {
    this.conversation.load(session.id ?? sessionId, session.transcript ?? []);
    for (const item of session.transcript ?? []) {
      if (item.kind === 'plan') {
        this.rememberGaps(item.plan);
      }
    }
    this.title = session.title || 'Untitled';
    // Proposals still waiting get their full cards (file, hunks, reason) back.
    for (const proposal of this.deps.controller.store.pending()) {
      this.conversation.addProposal(proposal, proposal.path ?? api.asRelativePath(proposal.uri));
    }
    await this.deps.memento.update(CURRENT_SESSION_KEY, this.conversation.sessionId);
  }

  // ---- what the webview asks for

  /** Carry out one message from the webview; errors show in the view, never throw. */
  async handle(message: FromWebview): Promise<void> {
    this.error = undefined;
    if (message.type === 'ready') {
      this.flush();
      if (!this.restored && this.deps.controller.runState !== 'starting') {
        await this.restore();
      } else if (this.restored) {
        await this.refreshCustomization(); // the view opened again: the files may have changed
      }
      return;
    }
    if (message.type === 'mentionQuery') {
      // The editor answers this one alone: no server, no run, nothing redrawn.
      this.post?.({ type: 'mentions', query: message.query, items: await mentionItems(message.query) });
      return;
    }
    if (message.type === 'pickMention') {
      const text = await pickMention();
      if (text) {
        this.post?.({ type: 'insertMention', text });
      }
      return;
    }
    this.acting++;
    this.generation++;
    try {
      if (!(await this.deps.ensureServer())) {
        this.error = 'The Toolgate server is not running (see the output channel "Toolgate Server").';
        return;
      }
      await this.carryOut(message);
    } catch (error) {
      this.error = errorText(error);
    } finally {
      this.acting--;
      this.flush();
      this.settle();
    }
  }

  /** The arguments `toolgate/plan` gave for scaffolding each gap, by plan and step. */
  private readonly gapArguments = new Map<string, Record<string, unknown>>();

  private requirePlan(planId: string): PlanCard {
    const plan = this.conversation.planCardOf(planId);
    if (!plan) {
      throw new Error('this plan is no longer in the conversation');
    }
    if (plan.decision) {
      throw new Error(`this plan was ${plan.decision} already`);
    }
    return plan;
  }

  /** One of the view's own slash commands (VIEW_COMMANDS). */
  private async viewCommand(name: string): Promise<void> {
    switch (name) {
      case 'new':
        return this.carryOut({ type: 'newSession' });
      case 'undo': {
        const last = this.conversation
          .list()
          .reverse()
          .find((e) => e.kind === 'run' && e.undo === 'available');
        if (!last || last.kind !== 'run') {
          throw new Error('no run of this conversation has changes to undo');
        }
        return this.carryOut({ type: 'undoRun', runId: last.runId });
      }
      case 'tests':
        await api.executeCommand(Command.runTests);
        return;
      case 'review':
        await api.executeCommand(Command.reviewChanges);
        return;
      case 'commands':
        this.customization.open = true;
        this.flush();
        await this.refreshCustomization();
        return;
    }
  }

  /** Rewind to before the turn of the entry `key`, after asking what to take back. */
  private async rewind(key: string): Promise<void> {
    const sessionId = this.conversation.sessionId;
    const entry = this.conversation.entry(key);
    if (!sessionId || !entry || entry.kind !== 'user') {
      throw new Error('this turn is no longer in the conversation');
    }
    if (entry.rewound) {
      throw new Error('this turn was rewound already');
    }
    let turn = entry.turn;
    if (turn === undefined && entry.runId) {
      // A turn sent from this view learns its number from the session the server keeps.
      const kept = (await this.fetchSession(sessionId)).transcript ?? [];
      const found = kept.find((item) => item.kind === 'user' && item.runId === entry.runId);
      turn = found?.kind === 'user' ? found.turn : undefined;
    }
    if (turn === undefined) {
      throw new Error('this turn has not been kept yet: wait for its run to end, then rewind');
    }
    const what = await chooseRewind(turn, entry.text);
    if (!what) {
      return; // Escape
    }
    const done = await this.deps.controller.execute<RewindResult>(ServerCommand.rewind, [
      { turn: turn - 1, what, sessionId },
    ]);
    await this.afterRewind(done);
  }

  /** Draw the session as the server keeps it after a rewind, and say what was done. */
  private async afterRewind(done: RewindResult | undefined): Promise<void> {
    const sessionId = done?.sessionId || this.conversation.sessionId;
    if (sessionId) {
      await this.show(await this.fetchSession(sessionId), sessionId);
    }
    if (done) {
      api.setStatusBarMessage(`Toolgate: ${rewindNote(done)}`, 8_000);
    }
    await this.refreshSessions();
  }

  private async carryOut(message: FromWebview): Promise<void> {
    const controller = this.deps.controller;
    switch (message.type) {
      case 'send': {
        const task = message.text.trim();
        if (!task) {
          return;
        }
        const slash = parseSlash(task);
        if (slash && VIEW_COMMANDS.some((c) => c.name === slash.name)) {
          await this.viewCommand(slash.name);
          return;
        }
        // Anything else goes as typed: the server expands `/NAME args` of a prompt file
        // (toolgate.ask), and the turn shows what the person typed.
        // The current file and selection go along unless the person removed their chip;
        // `@selection` and `@problems` take what the editor holds (the server reads the rest).
        const withPointing = message.withPointing !== false;
        const context = askContext(task, withPointing);
        this.conversation.addUser(task, withPointing ? pointingChip()?.label : undefined);
        this.status = { state: 'running', detail: 'starting' };
        this.flush();
        // A view without a session (first use, or after deleting one) starts a new one.
        const sessionId = this.conversation.sessionId;
        let result;
        try {
          result = await controller.askInSession(task, context, sessionId, sessionId === undefined);
        } catch (error) {
          this.conversation.markUnsent();
          this.status = { state: controller.runState };
          throw error;
        }
        if (result?.sessionId && result.sessionId !== this.conversation.sessionId) {
          this.conversation.sessionId = result.sessionId;
          await this.deps.memento.update(CURRENT_SESSION_KEY, result.sessionId);
        }
        await this.refreshSessions();
        return;
      }
      case 'stop':
        await controller.stop();
        return;
      case 'plan': {
        const task = message.text.trim();
        if (!task) {
          return;
        }
        this.status = { state: 'planning' };
        this.flush();
        try {
          // The server also sends the plan as `toolgate/plan`; the card is drawn once.
          // The same context as a message: the current file and selection, `@` mentions.
          const sessionId = this.conversation.sessionId;
          const context = askContext(task, message.withPointing !== false);
          const argument = { task, ...(sessionId ? { sessionId } : {}), ...(context ? { context } : {}) };
          this.onPlan(await controller.execute<PlanPayload>(ServerCommand.plan, [argument]));
        } finally {
          this.status = { state: controller.runState };
        }
        return;
      }
      case 'approvePlan': {
        const plan = this.requirePlan(message.planId);
        const result = await controller.execute<{ runId: string }>(ServerCommand.runPlan, [
          { planId: plan.planId, sessionId: this.conversation.sessionId },
        ]);
        this.conversation.planApproved(plan.planId, result?.runId);
        return;
      }
      case 'dropPlan': {
        const plan = this.requirePlan(message.planId);
        // The session keeps the decision, so the card comes back dropped after a reload.
        await controller.execute(ServerCommand.dropPlan, [{ planId: plan.planId, sessionId: this.conversation.sessionId }]);
        plan.decision = 'dropped';
        return;
      }
      case 'scaffold': {
        const plan = this.requirePlan(message.planId);
        const step = plan.steps.find((s) => s.stepId === message.stepId);
        if (!step?.gap) {
          throw new Error(`step ${message.stepId} of the plan has no gap to scaffold`);
        }
        // The arguments the server gave with the gap (the tool's proposed inputs and outputs).
        const args = this.gapArguments.get(`${plan.planId}/${step.stepId}`) ?? {
          name: step.gap.toolName,
          capability: step.capability,
        };
        const made = await controller.execute<ScaffoldResult>(ServerCommand.scaffoldTool, [
          { ...args, planId: plan.planId, stepId: step.stepId, sessionId: this.conversation.sessionId },
        ]);
        const manifest = made?.files?.[0];
        step.gap.toolName = made?.name ?? step.gap.toolName;
        step.gap.scaffolded = manifest ? api.asRelativePath(manifest).replace(/\/[^/]*$/, '') : step.gap.toolName;
        if (manifest) {
          await api.showDocument(manifest);
        }
        return;
      }
      case 'undoRun': {
        if (!this.conversation.setUndo(message.runId, 'undoing')) {
          throw new Error(`run ${message.runId} is not in this conversation`);
        }
        this.flush();
        let done: UndoResult | undefined;
        try {
          done = await this.deps.undoRun(message.runId);
        } catch (error) {
          this.conversation.setUndo(message.runId, 'available');
          throw error;
        }
        if (done) {
          // Through the controller onUndo drew it already; drawing it again changes nothing.
          this.showUndo({ ...done, runId: done.runId || message.runId });
        } else {
          this.conversation.setUndo(message.runId, 'available');
        }
        return;
      }
      case 'rewind':
        await this.rewind(message.key);
        return;
      case 'undoRewind': {
        const sessionId = this.conversation.sessionId;
        const done = await controller.execute<RewindResult>(ServerCommand.undoRewind, [
          { rewindId: message.rewindId, ...(sessionId ? { sessionId } : {}) },
        ]);
        await this.afterRewind(done);
        return;
      }
      case 'openDiff': {
        const proposal = controller.store.get(message.proposalId);
        if (!proposal) {
          throw new Error('this proposal is no longer waiting for review');
        }
        await this.deps.openDiff(proposal);
        return;
      }
      case 'accept': {
        const proposal = controller.store.get(message.proposalId);
        const all = !message.hunks || (proposal && message.hunks.length === proposal.hunks.length);
        if (message.hunks && message.hunks.length === 0) {
          await controller.reject(message.proposalId, undefined);
        } else {
          await controller.accept(message.proposalId, all ? undefined : message.hunks);
        }
        return;
      }
      case 'reject': {
        const proposal = controller.store.get(message.proposalId);
        const reason = await api.showInputBox({
          title: `Reject ${proposal ? `${proposal.tool}: ${api.asRelativePath(proposal.uri)}` : 'the proposal'}`,
          prompt: 'Why? (optional — the agent reads this)',
          ignoreFocusOut: true,
        });
        if (reason === undefined) {
          return; // Escape: the person changed their mind.
        }
        await controller.reject(message.proposalId, reason.trim() || undefined);
        return;
      }
      case 'decideHunk':
        // The diff editor's own per-hunk commands: one set of decisions, wherever it is made.
        await api.executeCommand(message.accept ? Command.acceptHunk : Command.rejectHunk, message.proposalId, message.hunk);
        return;
      case 'copy':
        await api.writeClipboard(message.text);
        return;
      case 'showProblems':
        await api.executeCommand(SHOW_PROBLEMS);
        return;
      case 'toggleCustomization':
        this.customization.open = !this.customization.open;
        if (this.customization.open) {
          this.flush();
          await this.refreshCustomization();
        }
        return;
      case 'refreshCustomization':
        await this.refreshCustomization();
        return;
      case 'newSession': {
        const result = await controller.execute<{ sessionId: string }>(ServerCommand.newSession, [{}]);
        this.conversation.load(result.sessionId, []);
        this.title = 'New conversation';
        await this.deps.memento.update(CURRENT_SESSION_KEY, result.sessionId);
        await this.refreshSessions();
        return;
      }
      case 'switchSession':
        await this.load(message.sessionId);
        await this.refreshSessions();
        return;
      case 'renameSession': {
        const sessionId = this.conversation.sessionId;
        if (!sessionId) {
          throw new Error('there is no session to rename yet: send a message first');
        }
        const title = await api.showInputBox({
          title: 'Rename the conversation',
          value: this.title,
          ignoreFocusOut: true,
        });
        if (!title?.trim()) {
          return;
        }
        await controller.execute(ServerCommand.renameSession, [{ sessionId, title: title.trim() }]);
        this.title = title.trim();
        await this.refreshSessions();
        return;
      }
      case 'deleteSession': {
        const sessionId = this.conversation.sessionId;
        if (!sessionId) {
          return;
        }
        const choice = await api.showModalWarning(
          `Delete the conversation "${this.title}"?`,
          'Its transcript is removed from .toolgate/sessions; the files it changed stay as they are.',
          'Delete',
        );
        if (choice !== 'Delete') {
          return;
        }
        await controller.execute(ServerCommand.deleteSession, [{ sessionId }]);
        this.conversation.load(undefined, []);
        this.title = 'New conversation';
        await this.deps.memento.update(CURRENT_SESSION_KEY, undefined);
        await this.refreshSessions();
        return;
      }
    }
  }
}
