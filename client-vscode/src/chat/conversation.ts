/**
 * The conversation the chat view draws, built from a session's transcript and then kept up to
 * date from the run's events and proposals. Pure: no `vscode`, no DOM.
 */
import type { AgentEvent, ChangeProblem, PlanPayload, Proposal, ProposalResolved, RunAccount, TranscriptEntry } from '../protocol';
import type { AttachedItem, ChatEntry, HunkCard, PlanCard, ProposalCard, RunEndEntry } from './messages';

type ToolEntry = Extract<ChatEntry, { kind: 'tool' }>;
type AssistantEntry = Extract<ChatEntry, { kind: 'assistant' }>;
type PlanEntry = Extract<ChatEntry, { kind: 'plan' }>;
type UserEntry = Extract<ChatEntry, { kind: 'user' }>;

/** A plan as its card shows it: each step with its tool, or its gap. */
export function planCard(payload: PlanPayload): PlanCard {
  const gaps = new Map((payload.gaps ?? []).map((gap) => [gap.step_id, gap]));
  return {
    planId: payload.planId,
    goal: payload.goal,
    status: payload.status,
    steps: (payload.steps ?? []).map((step) => {
      const gap = gaps.get(step.step_id);
      return {
        stepId: step.step_id,
        capability: step.capability,
        tool: step.tool ?? null,
        ...(gap || !step.tool
          ? {
              gap: {
                reason: gap?.reason ?? 'no_capability_match',
                message: gap?.reason_message ?? `no tool provides ${step.capability}`,
                toolName: gap?.proposed_tool_name ?? step.capability.replace(/\./g, '_'),
              },
            }
          : {}),
      };
    }),
  };
}

/** The paths a run's account says it changed. */
function changedFiles(account: unknown): string[] {
  const files = (account as RunAccount | undefined)?.files;
  return Array.isArray(files) ? files.map((f) => String(f?.path ?? '')).filter(Boolean) : [];
}

function lineCount(text: string): number {
  if (!text) {
    return 0;
  }
  const lines = text.split('\n');
  return text.endsWith('\n') ? lines.length - 1 : lines.length;
}

/** A proposal as its card shows it: the file, the +/- lines in all and per hunk, the reason. */
export function proposalCard(proposal: Proposal, path: string): ProposalCard {
  const hunks: HunkCard[] = proposal.hunks.map((hunk) => ({
    index: hunk.index,
    header: hunk.header,
    added: lineCount(hunk.newText),
    removed: lineCount(hunk.oldText),
    oldText: hunk.oldText,
    newText: hunk.newText,
    line: (hunk.range?.start?.line ?? 0) + 1,
  }));
  return {
    id: proposal.id,
    path,
    isNewFile: proposal.isNewFile,
    added: hunks.reduce((sum, hunk) => sum + hunk.added, 0),
    removed: hunks.reduce((sum, hunk) => sum + hunk.removed, 0),
    hunks,
    why: proposal.why ?? null,
    status: proposal.status,
  };
}

/** The one line a tool card shows for its target: a path, a pattern, a command. */
export function toolTarget(args: unknown): string {
  if (!args || typeof args !== 'object') {
    return typeof args === 'string' ? args.slice(0, 200) : '';
  }
  const record = args as Record<string, unknown>;
  for (const key of ['path', 'pattern', 'query', 'command', 'url', 'message']) {
    const value = record[key];
    if (typeof value === 'string' && value) {
      return value.length > 200 ? `${value.slice(0, 200)}…` : value;
    }
  }
  return '';
}

/** The arguments as the person reads them: the model's reason for the call is shown apart. */
export function shownArguments(args: unknown): unknown {
  if (!args || typeof args !== 'object' || Array.isArray(args)) {
    return args;
  }
  const rest = { ...(args as Record<string, unknown>) };
  delete rest._reasoningForCall;
  return rest;
}

/** Milliseconds since the epoch of an ISO time (undefined when there is none or it is not one). */
function timeOf(iso: string | null | undefined): number | undefined {
  const at = iso ? Date.parse(iso) : NaN;
  return Number.isNaN(at) ? undefined : at;
}

function toolStatus(decision: string | undefined): string {
  if (decision === 'ask') {
    return 'waiting';
  }
  if (decision === 'deny' || decision === 'denied') {
    return 'denied';
  }
  return 'running';
}

/** Holds the entries of one session's conversation and applies what the server sends. */
export class Conversation {
  private entries: ChatEntry[] = [];
  private counter = 0;
  /** Per assistant entry: its text from `assistant_text` and from `text_delta`. */
  private readonly streams = new Map<string, { chunks: string; deltas: string }>();
  private deltaSeen = false;
  /** When each run this window saw start began (ms since the epoch), to name it by its time. */
  private readonly starts = new Map<string, number>();
  /** What a run's mentions attached, told before its turn was drawn (a run started elsewhere). */
  private readonly pendingAttached = new Map<string, { attached: unknown[]; notAttached: unknown }>();

  constructor(public sessionId: string | undefined = undefined) {}

  /** The entries, oldest first (a copy). */
  list(): ChatEntry[] {
    // A rewind followed by a turn the model sees can no longer be taken back (the server refuses).
    let lastTurn = -1;
    this.entries.forEach((e, index) => {
      if (e.kind === 'user' && !e.rewound) {
        lastTurn = index;
      }
    });
    return this.entries.map((entry, index) => {
      if (entry.kind === 'rewind') {
        return { ...entry, ...(index < lastTurn && !entry.undone ? { settled: true } : {}) };
      }
      if (entry.kind === 'tool' && entry.proposal) {
        return { ...entry, proposal: { ...entry.proposal, hunks: entry.proposal.hunks.map((hunk) => ({ ...hunk })) } };
      }
      if (entry.kind === 'plan') {
        const steps = entry.plan.steps.map((step) => (step.gap ? { ...step, gap: { ...step.gap } } : { ...step }));
        return { ...entry, plan: { ...entry.plan, steps } };
      }
      if (entry.kind === 'run') {
        return { ...entry, files: [...entry.files] };
      }
      if (entry.kind === 'user') {
        return {
          ...entry,
          ...(entry.rules ? { rules: [...entry.rules] } : {}),
          ...(entry.attached ? { attached: entry.attached.map((item) => ({ ...item })) } : {}),
          ...(entry.notAttached ? { notAttached: [...entry.notAttached] } : {}),
        };
      }
      return { ...entry };
    });
  }

  private key(prefix: string): string {
    this.counter += 1;
    return `${prefix}-${this.counter}`;
  }

  /** Start over from a session's stored transcript. */
  load(sessionId: string | undefined, transcript: TranscriptEntry[]): void {
    this.sessionId = sessionId;
    this.entries = [];
    this.streams.clear();
    for (const item of transcript) {
      const before = this.entries.length;
      this.loadEntry(item);
      if (item.rewound) {
        for (const entry of this.entries.slice(before)) {
          entry.rewound = true;
        }
      }
    }
  }

  private loadEntry(item: TranscriptEntry): void {
    if (item.kind === 'user') {
      this.started(item.runId, timeOf(item.time));
      this.entries.push({
        kind: 'user',
        key: this.key('user'),
        text: item.text,
        runId: item.runId,
        ...(typeof item.turn === 'number' ? { turn: item.turn } : {}),
        ...(item.rules?.length ? { rules: [...item.rules] } : {}),
      });
      if (item.runId && Array.isArray(item.attached)) {
        this.setAttached(item.runId, item.attached, item.notAttached);
      }
    } else if (item.kind === 'rewind') {
      this.entries.push({
        kind: 'rewind',
        key: `rewind-${item.rewindId}`,
        rewindId: item.rewindId,
        toTurn: item.toTurn,
        text: item.text,
        undone: item.undone,
      });
    } else if (item.kind === 'assistant') {
      this.entries.push({ kind: 'assistant', key: this.key('assistant'), text: item.text, runId: item.runId });
    } else if (item.kind === 'tool') {
      const entry: ToolEntry = {
        kind: 'tool',
        key: `tool-${item.runId ?? ''}-${item.callId}`,
        runId: item.runId,
        callId: item.callId,
        name: item.name,
        toolKind: item.toolKind,
        target: toolTarget(item.arguments),
        arguments: shownArguments(item.arguments),
        status: item.status ?? 'ok',
        summary: item.summary ?? null,
      };
      const args = item.arguments && typeof item.arguments === 'object' ? (item.arguments as Record<string, unknown>) : {};
      const why = typeof args._reasoningForCall === 'string' ? args._reasoningForCall : null;
      entry.why = why;
      if (item.proposalId) {
        // The stored call keeps no hunks: the card shows what it knows (file, reason, outcome)
        // until a proposal still pending fills it in.
        entry.proposal = {
          id: item.proposalId,
          path: entry.target,
          isNewFile: false,
          added: 0,
          removed: 0,
          hunks: [],
          why,
          status: item.status === 'waiting' ? 'pending' : (item.status ?? 'resolved'),
          reason: item.summary || null,
        };
      }
      this.entries.push(entry);
    } else if (item.kind === 'note') {
      this.entries.push({ kind: 'note', key: this.key('note'), text: item.text });
    } else if (item.kind === 'plan') {
      this.loadPlan(item);
    } else if (item.kind === 'run' && item.runId && !this.runEnd(item.runId)) {
      // A run without a turn of its own (an undo, a plan's run) is named by when it ended.
      this.started(item.runId, timeOf(item.time));
      this.planRunEnded(item.runId, item.status || 'completed');
      const files = Array.isArray(item.files) ? item.files.map(String) : [];
      const undo = item.undo === 'available' && files.length ? 'available' : item.undo === 'undone' ? 'undone' : 'none';
      this.entries.push({
        kind: 'run',
        key: `run-${item.runId}`,
        runId: item.runId,
        status: item.status || 'completed',
        files,
        undo,
        ...(item.undoes
          ? { undoes: item.undoes, undoesStartedAt: this.starts.get(item.undoes), undoesAnUndo: this.runEnd(item.undoes)?.undoes !== undefined }
          : {}),
        startedAt: this.starts.get(item.runId),
        ...(undo === 'undone' && item.undoneBy ? { undoNote: 'Undone by a later undo.' } : {}),
      });
    }
  }

  private loadPlan(item: Extract<TranscriptEntry, { kind: 'plan' }>): void {
    if (!this.addPlan(item.plan)) {
      return;
    }
    const card = this.planCardOf(item.plan.planId);
    if (!card) {
      return;
    }
    if (item.decision) {
      card.decision = item.decision;
    }
    if (item.runId) {
      card.runId = item.runId;
      const end = this.runEnd(item.runId);
      if (end) {
        card.runStatus = end.status;
      }
    }
    for (const step of card.steps) {
      const made = item.scaffolded?.[step.stepId];
      if (made && step.gap) {
        step.gap.toolName = made.tool || step.gap.toolName;
        step.gap.scaffolded = made.folder || made.tool;
      }
    }
  }

  /** An undo finished: its own end, whose undo brings the undone run's changes back. */
  addUndoRun(undoRunId: string, undone: string, files: string[]): void {
    if (this.runEnd(undoRunId)) {
      return;
    }
    this.entries.push({
      kind: 'run',
      key: `run-${undoRunId}`,
      runId: undoRunId,
      status: 'completed',
      files,
      undo: files.length ? 'available' : 'none',
      undoes: undone,
      startedAt: this.started(undoRunId, Date.now()),
      undoesStartedAt: this.starts.get(undone),
      undoesAnUndo: this.runEnd(undone)?.undoes !== undefined,
    });
  }

  /** When a run started, remembered the first time it is told (undefined when never told). */
  private started(runId: string | undefined, at?: number): number | undefined {
    if (runId && at !== undefined && !this.starts.has(runId)) {
      this.starts.set(runId, at);
    }
    return runId ? this.starts.get(runId) : undefined;
  }

  /** The run an undo's end undid (undefined: not an undo, or not here). */
  undoneBy(runId: string): string | undefined {
    return this.runEnd(runId)?.undoes;
  }

  /** The person's message, shown at once; its run id comes with `run_started`. */
  addUser(text: string, pointed?: string): void {
    this.entries.push({ kind: 'user', key: this.key('user'), text, ...(pointed ? { pointed } : {}) });
  }

  /** The entry with this key (a copy of nothing: the entry itself, for the controller). */
  entry(key: string): ChatEntry | undefined {
    return this.entries.find((e) => e.key === key);
  }

  /** The last message could not start a run: it keeps no run id to wait for. */
  markUnsent(): void {
    const waiting = [...this.entries].reverse().find((e) => e.kind === 'user' && !e.runId);
    if (waiting && waiting.kind === 'user') {
      waiting.runId = 'unsent';
    }
  }

  /** A line of the view's own (an error, a refusal). */
  addNote(text: string): void {
    this.entries.push({ kind: 'note', key: this.key('note'), text });
  }

  /** Whether an event belongs to the session on screen (events of older servers carry none). */
  belongs(event: { sessionId?: string }): boolean {
    return !event.sessionId || !this.sessionId || event.sessionId === this.sessionId;
  }

  /** Apply one `toolgate/event`; false when it is not for this session. */
  apply(event: AgentEvent): boolean {
    if (!this.belongs(event)) {
      return false;
    }
    if (!this.sessionId && event.sessionId) {
      this.sessionId = event.sessionId;
    }
    const runId = event.runId;
    switch (event.type) {
      case 'run_started': {
        const waiting = [...this.entries].reverse().find((e) => e.kind === 'user' && !e.runId);
        if (waiting && waiting.kind === 'user') {
          waiting.runId = runId;
        } else if (!this.entries.some((e) => e.kind === 'user' && e.runId === runId)) {
          this.entries.push({ kind: 'user', key: this.key('user'), text: event.task ?? '', runId });
        }
        this.addRules(runId, event.rules);
        this.started(runId, Date.now());
        const pending = runId ? this.pendingAttached.get(runId) : undefined;
        if (runId && pending) {
          this.pendingAttached.delete(runId);
          this.setAttached(runId, pending.attached, pending.notAttached);
        }
        break;
      }
      case 'rules_used':
        if (!this.addRules(runId, event.rules)) {
          return false;
        }
        break;
      case 'assistant_text':
      case 'text_delta': {
        const text = typeof event.text === 'string' ? event.text : '';
        if (!text) {
          break;
        }
        const entry = this.currentAssistant(runId);
        const stream = this.streams.get(entry.key) ?? { chunks: '', deltas: '' };
        if (event.type === 'text_delta') {
          this.deltaSeen = true;
          stream.deltas += text;
        } else {
          stream.chunks += text;
        }
        this.streams.set(entry.key, stream);
        // A server that sends both streams the same text twice: the throttled deltas win.
        entry.text = this.deltaSeen ? stream.deltas : stream.chunks;
        break;
      }
      case 'tool_call': {
        const callId = event.callId ?? this.key('call');
        const key = `tool-${runId ?? ''}-${callId}`;
        if (this.entries.some((e) => e.key === key)) {
          break;
        }
        this.entries.push({
          kind: 'tool',
          key,
          runId,
          callId,
          name: event.tool ?? '?',
          toolKind: event.toolKind,
          target: toolTarget(event.arguments),
          arguments: shownArguments(event.arguments),
          status: toolStatus(event.decision),
          why: event.why ?? null,
          startedAt: Date.now(),
        });
        break;
      }
      case 'tool_result': {
        const entry = this.tool(runId, event.callId);
        if (!entry) {
          break;
        }
        if (event.decision === 'rejected') {
          entry.status = 'rejected';
        } else if (event.decision === 'denied') {
          entry.status = 'denied';
        } else {
          entry.status = event.success ? 'ok' : 'failed';
        }
        if (event.error) {
          entry.summary = event.error;
        }
        if (typeof event.result === 'string' && event.result) {
          entry.result = event.result;
        }
        // The server's own measure when it sends one (older servers do not): else the time here.
        entry.durationMs =
          typeof event.durationMs === 'number' ? event.durationMs : entry.startedAt !== undefined ? Date.now() - entry.startedAt : undefined;
        break;
      }
      case 'tests_finished': {
        // The run's latest call that runs code is the test run these figures come from.
        const entry = [...this.entries]
          .reverse()
          .find((e): e is ToolEntry => e.kind === 'tool' && e.runId === runId && e.toolKind === 'run');
        if (entry && event.notRun) {
          // Zero counts of tests that never ran are no pass: say what happened instead.
          entry.summary = `tests did not run: ${event.notRun}`;
        } else if (entry && event.summary) {
          entry.tests = event.summary;
        }
        break;
      }
      case 'proposal_problems': {
        // What the editor's other language servers report after the change: named on its card.
        const entry = this.entries.find((e): e is ToolEntry => e.kind === 'tool' && e.proposal?.id === event.proposalId);
        if (!entry?.proposal || !Array.isArray(event.problems)) {
          return false;
        }
        entry.proposal = { ...entry.proposal, problems: event.problems as ChangeProblem[] };
        break;
      }
      case 'parse_error':
        this.addNote(`The model's tool call could not be read: ${event.error ?? ''}`);
        break;
      case 'notice':
        if (Array.isArray(event.attached) && this.setAttached(runId, event.attached, event.notAttached)) {
          break; // shown in the turn it belongs to, not as a line of its own
        }
        if (typeof event.message === 'string') {
          this.addNote(event.message);
        }
        break;
      case 'run_finished': {
        if (event.status && event.status !== 'completed') {
          const reason = event.reason ? `: ${event.reason}` : '';
          this.addNote(`Run ${String(event.status).replace(/_/g, ' ')}${reason}`);
        }
        if (runId) {
          this.planRunEnded(runId, String(event.status ?? 'completed'));
        }
        if (runId && !this.runEnd(runId)) {
          const files = changedFiles(event.account);
          this.entries.push({
            kind: 'run',
            key: `run-${runId}`,
            runId,
            status: String(event.status ?? 'completed'),
            files,
            undo: files.length ? 'available' : 'none',
            startedAt: this.started(runId),
          });
        }
        break;
      }
      default:
        return false;
    }
    return true;
  }

  /** What the turn's `@` mentions attached (`notice.attached`); false when the turn is not here. */
  private setAttached(runId: string | undefined, attached: unknown[], notAttached: unknown): boolean {
    if (!runId) {
      return false;
    }
    // The server attaches the context before the run starts: its turn may not know its run yet.
    let turn = this.entries.find((e): e is UserEntry => e.kind === 'user' && e.runId === runId);
    if (!turn) {
      turn = [...this.entries].reverse().find((e): e is UserEntry => e.kind === 'user' && !e.runId);
      if (turn) {
        turn.runId = runId;
      } else {
        // A run started elsewhere: its turn comes with run_started.
        this.pendingAttached.set(runId, { attached, notAttached });
        return true;
      }
    }
    turn.attached = attached
      .filter((item): item is Record<string, unknown> => !!item && typeof item === 'object')
      .map((item) => {
        const shown: AttachedItem = { mention: String(item.mention ?? ''), label: String(item.label ?? '') };
        if (typeof item.cut === 'string' && item.cut) {
          shown.cut = item.cut;
        }
        return shown;
      });
    const refused = Array.isArray(notAttached) ? notAttached.map(String) : [];
    if (refused.length) {
      turn.notAttached = refused;
    }
    return true;
  }

  /** Name rules files in the header of the run's turn, each once; false when nothing changed. */
  private addRules(runId: string | undefined, rules: unknown): boolean {
    const files = Array.isArray(rules) ? rules.filter((f): f is string => typeof f === 'string' && f.length > 0) : [];
    const turn = this.entries.find((e): e is UserEntry => e.kind === 'user' && e.runId === runId);
    if (!turn || !runId || files.length === 0) {
      return false;
    }
    const known = turn.rules ?? [];
    const fresh = files.filter((file, index) => !known.includes(file) && files.indexOf(file) === index);
    if (fresh.length === 0) {
      return false;
    }
    turn.rules = [...known, ...fresh];
    return true;
  }

  private currentAssistant(runId: string | undefined): AssistantEntry {
    const last = this.entries.at(-1);
    if (last && last.kind === 'assistant' && last.runId === runId) {
      return last;
    }
    const entry: AssistantEntry = { kind: 'assistant', key: this.key('assistant'), text: '', runId };
    this.entries.push(entry);
    return entry;
  }

  private tool(runId: string | undefined, callId: string | undefined): ToolEntry | undefined {
    return this.entries.find(
      (e): e is ToolEntry => e.kind === 'tool' && e.callId === callId && (e.runId === runId || !runId),
    );
  }

  /**
   * A proposal joins the card of the call that made it: the card that names its id (from a
   * transcript), else the run's latest call of that tool still waiting, else a card of its own.
   */
  addProposal(proposal: Proposal, path: string): boolean {
    const card = proposalCard(proposal, path);
    const tools = this.entries.filter((e): e is ToolEntry => e.kind === 'tool');
    let entry = tools.find((e) => e.proposal?.id === proposal.id);
    if (!entry) {
      entry = [...tools]
        .reverse()
        .find((e) => !e.proposal && e.runId === proposal.runId && e.name === proposal.tool && e.status === 'waiting');
    }
    if (!entry) {
      if (proposal.runId && this.sessionId && !this.entries.some((e) => 'runId' in e && e.runId === proposal.runId)) {
        return false; // Another session's run.
      }
      entry = {
        kind: 'tool',
        key: `proposal-${proposal.id}`,
        runId: proposal.runId,
        callId: proposal.id,
        name: proposal.tool,
        target: path,
        status: 'waiting',
      };
      this.entries.push(entry);
    }
    entry.proposal = card;
    entry.target = path;
    if (proposal.status === 'pending') {
      entry.status = 'waiting';
    }
    return true;
  }

  /** A proposal was decided (here, in the diff editor, or by the server). */
  resolveProposal(resolved: ProposalResolved): boolean {
    const entry = this.entries.find((e): e is ToolEntry => e.kind === 'tool' && e.proposal?.id === resolved.id);
    if (!entry?.proposal) {
      return false;
    }
    entry.proposal = {
      ...entry.proposal,
      status: resolved.status,
      reason: resolved.reason ? `Reason: ${resolved.reason}` : null,
    };
    if (resolved.status === 'rejected') {
      entry.status = 'rejected';
    } else if (resolved.status === 'accepted' || resolved.status === 'partially_accepted') {
      entry.status = 'ok';
    } else if (resolved.status === 'stale' || resolved.status === 'cancelled') {
      entry.status = 'failed';
    }
    return true;
  }

  private runEnd(runId: string): RunEndEntry | undefined {
    return this.entries.find((e): e is RunEndEntry => e.kind === 'run' && e.runId === runId);
  }

  /** Whether the run's end is in this conversation. */
  hasRunEnd(runId: string): boolean {
    return this.runEnd(runId) !== undefined;
  }

  /** Where a run's undo stands; false when the run has no end entry here. */
  setUndo(runId: string, undo: RunEndEntry['undo'], note?: string): boolean {
    const entry = this.runEnd(runId);
    if (!entry) {
      return false;
    }
    entry.undo = undo;
    entry.undoNote = note;
    return true;
  }

  private plan(planId: string): PlanEntry | undefined {
    return this.entries.find((e): e is PlanEntry => e.kind === 'plan' && e.plan.planId === planId);
  }

  /** A plan from `toolgate/plan` (or the command's answer): a new card, or the same card again. */
  addPlan(payload: PlanPayload): boolean {
    if (!payload || typeof payload.planId !== 'string' || this.plan(payload.planId)) {
      return false;
    }
    this.entries.push({ kind: 'plan', key: `plan-${payload.planId}`, plan: planCard(payload) });
    return true;
  }

  /** The person approved a plan and it started `runId` (which may have ended already). */
  planApproved(planId: string, runId: string | undefined): void {
    const card = this.planCardOf(planId);
    if (!card) {
      return;
    }
    card.decision = 'approved';
    card.runId = runId;
    const end = runId ? this.runEnd(runId) : undefined;
    if (end) {
      card.runStatus = end.status;
    }
  }

  /** The card of the plan whose run this was says how it ended. */
  private planRunEnded(runId: string, status: string): void {
    for (const entry of this.entries) {
      if (entry.kind === 'plan' && entry.plan.runId === runId) {
        entry.plan.runStatus = status;
      }
    }
  }

  /** The plan's card, to change (undefined when it is not in this conversation). */
  planCardOf(planId: string): PlanCard | undefined {
    return this.plan(planId)?.plan;
  }
}
