/** The server's protocol as this client uses it (docs/PROTOCOL.md): ids, names and message shapes. */

/**
 * A command the person cancelled: the request was withdrawn with `$/cancelRequest`, and the
 * server stopped its work. Nothing to report.
 */
export class CommandCancelled extends Error {
  constructor(readonly command: string) {
    super(`${command} was cancelled`);
  }
}

/** Commands the server registers (executeCommandProvider); called through workspace/executeCommand only. */
export const ServerCommand = {
  ask: 'toolgate.ask',
  editSelection: 'toolgate.editSelection',
  acceptProposal: 'toolgate.acceptProposal',
  rejectProposal: 'toolgate.rejectProposal',
  acceptAll: 'toolgate.acceptAll',
  listProposals: 'toolgate.listProposals',
  cancel: 'toolgate.cancel',
  runTests: 'toolgate.runTests',
  fixFailure: 'toolgate.fixFailure',
  reportDiagnostics: 'toolgate.reportDiagnostics',
  newSession: 'toolgate.newSession',
  listSessions: 'toolgate.listSessions',
  loadSession: 'toolgate.loadSession',
  renameSession: 'toolgate.renameSession',
  deleteSession: 'toolgate.deleteSession',
  undoRun: 'toolgate.undoRun',
  rewind: 'toolgate.rewind',
  undoRewind: 'toolgate.undoRewind',
  plan: 'toolgate.plan',
  runPlan: 'toolgate.runPlan',
  dropPlan: 'toolgate.dropPlan',
  scaffoldTool: 'toolgate.scaffoldTool',
  review: 'toolgate.review',
  reviewLoop: 'toolgate.reviewLoop',
  customization: 'toolgate.customization',
  runCommand: 'toolgate.runCommand',
} as const;

/** Custom notifications and requests. */
export const Method = {
  proposal: 'toolgate/proposal',
  proposalResolved: 'toolgate/proposalResolved',
  event: 'toolgate/event',
  saveDocuments: 'toolgate/saveDocuments',
  plan: 'toolgate/plan',
  reviewLoop: 'toolgate/reviewLoop',
  sessionChanged: 'toolgate/sessionChanged',
} as const;

/** URI scheme of the read-only documents that hold proposed text. */
export const PROPOSAL_SCHEME = 'toolgate-proposal';

export interface Position {
  line: number;
  character: number;
}

export interface Range {
  start: Position;
  end: Position;
}

export interface Hunk {
  index: number;
  range: Range;
  oldText: string;
  newText: string;
  header: string;
}

export type ProposalStatus =
  | 'pending'
  | 'accepted'
  | 'partially_accepted'
  | 'rejected'
  | 'stale'
  | 'cancelled';

/** Body of toolgate/proposal (and of each item of toolgate.listProposals). */
export interface Proposal {
  id: string;
  runId: string;
  tool: string;
  uri: string;
  /** Workspace-relative path of the target. */
  path?: string;
  diff: string;
  hunks: Hunk[];
  why?: string | null;
  status: ProposalStatus;
  isNewFile: boolean;
  proposedText: string;
  version?: number | null;
}

/** Body of toolgate/proposalResolved. */
export interface ProposalResolved {
  id: string;
  /** The file the proposal changes. */
  uri?: string;
  status: ProposalStatus;
  hunksApplied?: number[];
  reason?: string | null;
}

export type RunFinishedStatus =
  | 'completed'
  | 'incomplete'
  | 'failed'
  | 'blocked_by_policy'
  | 'limit_reached'
  | 'cancelled';

/** What a tool does, as the server says of each call: its cards are drawn from it, never its name. */
export type ToolKind = 'read' | 'change' | 'run' | 'git' | 'other';

/** Body of toolgate/event; the fields present depend on `type`. */
export interface AgentEvent {
  type:
    | 'run_started'
    | 'assistant_text'
    | 'tool_call'
    | 'tool_result'
    | 'parse_error'
    | 'mode_changed'
    | 'run_finished'
    | 'text_delta'
    | 'tests_finished'
    | string;
  runId?: string;
  sessionId?: string;
  task?: string;
  text?: string;
  callId?: string;
  tool?: string;
  /** What the call's tool does: `read`, `change` (files, as a proposal), `run`, `git`, `other`. */
  toolKind?: ToolKind;
  arguments?: unknown;
  decision?: string;
  why?: string | null;
  success?: boolean;
  error?: string | null;
  /** tool_result: what the call gave back, as an excerpt to read (servers before it send none). */
  result?: string | null;
  /** tool_result: how long the call took, in milliseconds. */
  durationMs?: number;
  rawExcerpt?: string;
  status?: RunFinishedStatus | string;
  reason?: string | null;
  answer?: string | null;
  summary?: TestSummary | null;
  /** tests_finished: what happened when the tests did not run (null when they ran). */
  notRun?: string | null;
  message?: string;
  /** run_started: the rules files of the system prompt; rules_used: those attached later. */
  rules?: string[];
  [key: string]: unknown;
}

/** Params of toolgate/saveDocuments and its result. */
export interface SaveDocumentsParams {
  uris: string[];
}
export interface SaveDocumentsResult {
  saved: string[];
}

/** Result of toolgate.acceptProposal. */
export interface AcceptResult {
  id: string;
  status: ProposalStatus;
  hunksApplied: number[];
}

/** Context that goes with toolgate.ask. */
export interface AskContext {
  uri?: string;
  range?: Range;
  text?: string;
  /** The problems the editor shows, for a message that mentions `@problems`. */
  diagnostics?: ContextDiagnostic[];
}

/** A problem the editor shows, as `toolgate.ask`'s context carries it (LSP's shape, with its file). */
export interface ContextDiagnostic {
  uri: string;
  range: Range;
  message: string;
  severity?: number;
  source?: string;
}

/** A problem another language server reports after a change landed (`proposal_problems` event). */
export interface ChangeProblem {
  /** Workspace-relative path. */
  path: string;
  /** 1-based line. */
  line: number;
  source: string;
  message: string;
  /** error, warning, information or hint. */
  severity: string;
}

/** A diagnostic as reported back to the server with toolgate.reportDiagnostics (LSP shape). */
export interface ReportedDiagnostic {
  range: Range;
  severity: 1 | 2 | 3 | 4;
  message: string;
  source?: string;
  code?: string | number;
}

export interface ReportedDiagnostics {
  uri: string;
  diagnostics: ReportedDiagnostic[];
}

/** The counts of one test run. */
export interface TestSummary {
  total: number;
  passed: number;
  failed: number;
  skipped: number;
  errors: number;
  duration_seconds: number;
}

/** Result of toolgate.runTests. */
export interface RunTestsResult {
  summary: TestSummary;
  failures: unknown[];
  /** pytest's exit status (null when it could not start). */
  exitCode?: number | null;
  /** What happened when the tests did not run (no results, none collected, a timeout). */
  notRun?: string | null;
}

/** Result of toolgate.ask. */
export interface AskResult {
  runId: string;
  sessionId?: string;
}

/** One row of toolgate.listSessions. */
export interface SessionInfo {
  id: string;
  title: string;
  created: string;
  lastActivity: string;
  turns: number;
}

/** One entry of a session's transcript (toolgate.loadSession). */
export type TranscriptEntry = (
  | {
      kind: 'user';
      text: string;
      runId?: string;
      turn?: number;
      /** When the turn began (ISO 8601). */
      time?: string | null;
      /** The rules files the turn used. */
      rules?: string[];
      /** What the message's `@` mentions attached (`notice.attached`), and what they could not. */
      attached?: { mention: string; label: string; cut?: string }[];
      notAttached?: string[];
    }
  | { kind: 'assistant'; text: string; runId?: string }
  | {
      kind: 'tool';
      runId?: string;
      callId: string;
      name: string;
      /** What the tool does (absent in sessions kept before the server sent it). */
      toolKind?: ToolKind;
      arguments?: unknown;
      status?: string;
      summary?: string | null;
      proposalId?: string | null;
    }
  | { kind: 'note'; text: string }
  | {
      /** A plan shown in this conversation, with what became of it. */
      kind: 'plan';
      plan: PlanPayload;
      decision?: 'approved' | 'dropped';
      /** The run an approved plan started. */
      runId?: string;
      /** Gaps whose missing tool was scaffolded, by step id. */
      scaffolded?: Record<string, { tool: string; folder: string }>;
    }
  | {
      /** The end of a run (an undo is a run too: `undoes` names the run it undid). */
      kind: 'run';
      runId: string;
      status: string;
      reason?: string | null;
      files?: string[];
      /** Read from the workspace's checkpoints when the session is loaded. */
      undo?: 'available' | 'undone' | 'none';
      undoneBy?: string;
      undoes?: string;
      /** When the run ended (for an undo: when it was made), ISO 8601. */
      time?: string | null;
    }
  | {
      /** A rewind of the session (`toolgate.rewind`) and whether it was taken back. */
      kind: 'rewind';
      rewindId: string;
      toTurn: number;
      text: string;
      undone: boolean;
    }
) & {
  /** A rewind took this entry's turn out of what the model sees; the file keeps it. */
  rewound?: boolean;
};

/** `toolgate.rewind`'s and `toolgate.undoRewind`'s answer. */
export interface RewindResult {
  sessionId: string;
  rewindId: string;
  toTurn: number;
  what: 'both' | 'code' | 'conversation';
  turns: number[];
  runs: string[];
  undos: string[];
  leftAlone: string[];
  revert: string[];
  takenBack: boolean;
}

/** Result of toolgate.loadSession. */
export interface LoadedSession {
  id: string;
  title: string;
  created?: string;
  lastActivity?: string;
  transcript: TranscriptEntry[];
}

/** Terminal proposal states: the proposal no longer waits for a decision. */
export function isResolved(status: ProposalStatus): boolean {
  return status !== 'pending';
}

/** `toolgate.undoRun`'s answer: what was (or, for a dry run, would be) restored. */
export interface UndoResult {
  runId: string;
  files: { path: string; action: 'restore' | 'remove' | 'unchanged' | 'changed_since'; reason: string }[];
  commits: string[];
  revert: string | null;
  dryRun: boolean;
  undoRunId?: string;
}

/** One step of a plan as `toolgate/plan` sends it: its capability and the tool resolved for it. */
export interface PlanStep {
  step_id: string;
  capability: string;
  inputs?: Record<string, unknown>;
  on_failure?: string;
  coverage_confidence?: number;
  coverage_rationale?: string;
  /** The tool chosen for the step; null for a gap. */
  tool: string | null;
}

/** What a plan lacks for one step (the gap report's entry), with the command that scaffolds it. */
export interface PlanGap {
  step_id: string;
  missing_capability: string;
  /** `no_capability_match`, `schema_incompatible`, `low_confidence` or `invalid_capability`. */
  reason: string;
  reason_message: string;
  proposed_tool_name: string;
  priority?: string;
  scaffold?: { command: string; arguments: unknown[] };
}

/** Body of `toolgate/plan` and result of `toolgate.plan`. */
export interface PlanPayload {
  planId: string;
  goal: string;
  /** `ready` (every step has a tool) or `partial` (a gap: the plan does not run). */
  status: 'ready' | 'partial' | string;
  steps: PlanStep[];
  gaps: PlanGap[];
  workflow?: string | null;
  /** The kept plan's file (`.toolgate/plans/ID.json`). */
  uri?: string;
  /** The session that keeps the plan. */
  sessionId?: string;
}

/** One comment of a code review, on the line it is about (also published as a diagnostic). */
export interface ReviewComment {
  path: string;
  line: number;
  /** `error`, `warning`, `info` or `hint`. */
  severity: string;
  message: string;
  suggestion?: string | null;
}

/** Result of `toolgate.review`. */
export interface ReviewResult {
  approved: boolean;
  comments: ReviewComment[];
  metrics?: Record<string, unknown>;
  /** One line: the verdict and the comments by severity (`not approved: 1 error`). */
  summary: string;
  /** The pending proposal reviewed, if it was one. */
  proposalId?: string | null;
  /** How many comments became diagnostics. */
  diagnostics?: number;
}

/** Body of toolgate/sessionChanged: another process (a terminal, another editor) changed a session. */
export interface SessionChanged {
  sessionId: string;
  /** The session's file is gone. */
  deleted: boolean;
}

/** Body of `toolgate/reviewLoop`: the end of a `toolgate.reviewLoop`. */
export interface ReviewLoopEnd {
  loopId: string;
  sessionId?: string;
  /** `completed`, `incomplete`, `failed`, `cancelled`, … */
  status: string;
  reason?: string | null;
  approved?: boolean;
  rounds?: { runId: string; status: string; reason?: string | null; review?: { approved: boolean; comments: unknown[] } | null }[];
  tests?: {
    command?: string;
    passed?: boolean;
    error?: string | null;
    summary?: { total: number; passed: number; failed: number; errors: number; skipped: number };
  } | null;
  runLog?: string;
}

/** Result of `toolgate.scaffoldTool`. */
export interface ScaffoldResult {
  name: string;
  files: string[];
}

/** A run's account in `run_finished`: the files it changed, among the rest. */
export interface RunAccount {
  files?: { path: string; added?: number; removed?: number }[];
}

/** A rules file the agent reads, and how it applies: `always`, `globs`, `on_request` or `manual`. */
export interface RuleInfo {
  file: string;
  applies: string;
  source: string;
}

/** An Agent Skill found (its body is loaded only when the model asks for it). */
export interface SkillInfo {
  name: string;
  description: string;
  file: string;
  source: string;
  license?: string | null;
}

/** A prompt file's slash command. */
export interface PromptCommandInfo {
  name: string;
  description: string;
  argumentHint?: string | null;
  file: string;
  source: string;
}

/** A hook, with whether it runs (a workspace's hook waits for the person's confirmation). */
export interface HookInfo {
  event: string;
  matcher: string;
  command: string;
  source: string;
  trusted: boolean;
}

/** An MCP server, with where it is configured and its state. */
export interface McpServerInfo {
  name: string;
  source: string;
  state: string;
}

/** Result of toolgate.customization: what customizes the agent in this workspace. */
export interface Customization {
  rules: RuleInfo[];
  skills: SkillInfo[];
  commands: PromptCommandInfo[];
  hooks: HookInfo[];
  mcpServers: McpServerInfo[];
  problems: string[];
  notices: string[];
}
