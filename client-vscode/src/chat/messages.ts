/**
 * What the chat view's webview and the extension say to each other. Shared by both bundles:
 * no `vscode`, no DOM.
 */
import type { ChangeProblem, Customization, TestSummary, ToolKind } from '../protocol';
import type { MentionItem } from './mentions';

/** One hunk of a proposal, as its card shows it. */
export interface HunkCard {
  index: number;
  header: string;
  added: number;
  removed: number;
  /** The lines it replaces and the lines it puts there (absent on a card read from a transcript). */
  oldText?: string;
  newText?: string;
  /** The first line of the file it changes (1-based), for the line numbers of the inline diff. */
  line?: number;
  /** What the person decided on this hunk alone (in the card or the diff editor's CodeLens). */
  decision?: 'accepted' | 'rejected';
}

/** A proposal as its card shows it. */
export interface ProposalCard {
  id: string;
  path: string;
  isNewFile: boolean;
  added: number;
  removed: number;
  hunks: HunkCard[];
  why: string | null;
  /** `pending`, `accepted`, `partially_accepted`, `rejected`, `stale` or `cancelled`. */
  status: string;
  reason?: string | null;
  /** What the editor's other language servers report after the change that they did not before. */
  problems?: ChangeProblem[];
}

/** One piece of context a message's `@` mentions attached, as the server said (`notice.attached`). */
export interface AttachedItem {
  mention: string;
  label: string;
  /** How it was cut to fit the model's window; absent when it went whole. */
  cut?: string;
}

/** One entry of the conversation; `rewound`: a rewind took its turn out of what the model sees. */
export type ChatEntry = (
  | {
      kind: 'user';
      key: string;
      text: string;
      runId?: string;
      /** The rules files the turn used: those of its system prompt, then those attached later. */
      rules?: string[];
      /** The session's number of this turn (1 is the first); what a rewind goes back to. */
      turn?: number;
      /** What the message's `@` mentions attached, and what they could not. */
      attached?: AttachedItem[];
      notAttached?: string[];
      /** The file (and lines) the person was looking at, sent along with the message. */
      pointed?: string;
    }
  | { kind: 'assistant'; key: string; text: string; runId?: string }
  | {
      kind: 'tool';
      key: string;
      runId?: string;
      callId: string;
      name: string;
      /** What the tool does, as the server said; undefined when it did not say. */
      toolKind?: ToolKind;
      /** One line that says what the call did to what (a path, a pattern, a command). */
      target: string;
      /** `running`, `ok`, `failed`, `waiting` (for review), `rejected` or `denied`. */
      status: string;
      summary?: string | null;
      why?: string | null;
      /** The call's arguments as the server showed them (secrets taken out). */
      arguments?: unknown;
      /** What the call gave back, as text to read (an excerpt). */
      result?: string | null;
      /** When the call started here (ms since the epoch) and how long it took. */
      startedAt?: number;
      durationMs?: number;
      proposal?: ProposalCard;
      tests?: TestSummary;
    }
  | { kind: 'note'; key: string; text: string }
  | RunEndEntry
  | { kind: 'plan'; key: string; plan: PlanCard }
  | RewindEntry
) & { rewound?: boolean };

/** A rewind of the session to a turn, and whether it was taken back since. */
export interface RewindEntry {
  kind: 'rewind';
  key: string;
  rewindId: string;
  toTurn: number;
  /** What it did, in words. */
  text: string;
  undone: boolean;
  /** The conversation went on after it: it can no longer be taken back. */
  settled?: boolean;
}

/** The file (and lines) the person looks at: offered with the next message, removable. */
export interface PointingChip {
  uri: string;
  /** `calc.py` or `calc.py:3-5`. */
  label: string;
  /** Whether lines are selected (their text goes along), or only the file is open. */
  selection: boolean;
}

/** The end of a run: how it ended, the files it changed, and its undo. */
export interface RunEndEntry {
  kind: 'run';
  key: string;
  runId: string;
  status: string;
  /** Workspace-relative paths the run changed (from its account). */
  files: string[];
  /** `available` (the Undo button shows), `undoing`, or `undone`. */
  undo: 'available' | 'undoing' | 'undone' | 'none';
  /** What the undo did (or why it did not). */
  undoNote?: string;
  /** For an undo (itself a run): the run it undid; its own undo brings that run's changes back. */
  undoes?: string;
  /** When the run started (ms since the epoch), known for the runs this window saw start. */
  startedAt?: number;
  /** For an undo: when the run it undid started, and whether that run was itself an undo. */
  undoesStartedAt?: number;
  undoesAnUndo?: boolean;
}

/** One step of a plan card. */
export interface PlanStepCard {
  stepId: string;
  capability: string;
  /** The resolved tool; null for a gap. */
  tool: string | null;
  gap?: {
    reason: string;
    message: string;
    toolName: string;
    /** The tool's folder once "Scaffold missing tool" made it. */
    scaffolded?: string;
  };
}

/** A plan as its card shows it. */
export interface PlanCard {
  planId: string;
  goal: string;
  /** `ready` or `partial` as the server resolved it. */
  status: string;
  steps: PlanStepCard[];
  /** What the person decided: nothing yet, approved (it runs), or dropped. */
  decision?: 'approved' | 'dropped';
  /** The run an approved plan started. */
  runId?: string;
  /** How that run ended (as its run line says); absent while it runs. */
  runStatus?: string;
}

/** Whether a plan may be approved: it is ready, or every gap has been scaffolded since. */
export function planRunnable(plan: PlanCard): boolean {
  return plan.steps.every((step) => step.tool !== null || step.gap?.scaffolded !== undefined);
}

/** What the run is doing, for the status line and the Stop button. */
export interface RunStatus {
  /** `starting`, `idle`, `running`, `stopped` or `error` (the server), as the status bar says; `planning` while a plan is asked for. */
  state: string;
  /** The last run's ending (`completed`, `cancelled`, …) or what the running one does now. */
  detail?: string;
}

/** A session in the picker. */
export interface SessionChoice {
  id: string;
  title: string;
  turns: number;
  lastActivity: string;
}

/** A command of the input's `/` menu: one of the view's own, or a project's prompt file. */
export interface SlashCommand {
  name: string;
  description: string;
  /** What to type after the name (a prompt file's `argument-hint`). */
  argumentHint?: string;
  /** `built-in`, or the prompt file it comes from (workspace-relative where it is in it). */
  source: string;
}

/**
 * The view's own slash commands. Their names are among the server's built-in ones
 * (`BUILTIN_COMMANDS`), so a prompt file never takes them: the server moves such a file under
 * `/project:NAME`.
 */
export const VIEW_COMMANDS: readonly SlashCommand[] = [
  { name: 'new', description: 'Start a new conversation', source: 'built-in' },
  { name: 'undo', description: "Undo this conversation's last run that changed files", source: 'built-in' },
  { name: 'tests', description: "Run the project's tests; failures go to Problems", source: 'built-in' },
  { name: 'review', description: 'Review the uncommitted changes', source: 'built-in' },
  {
    name: 'commands',
    description: 'Show what customizes the agent here: rules, skills, commands, hooks, MCP servers',
    source: 'built-in',
  },
];

/** The Customization panel: what the server found, and whether it is open. */
export interface CustomizationPanel {
  open: boolean;
  loading: boolean;
  data?: Customization;
  /** Why the last refresh failed. */
  error?: string;
}

/** Everything the view draws. */
export interface ChatState {
  sessionId?: string;
  title: string;
  sessions: SessionChoice[];
  entries: ChatEntry[];
  status: RunStatus;
  /** The `/` menu: the view's own commands, then the project's prompt commands. */
  commands: SlashCommand[];
  customization: CustomizationPanel;
  /** A message to show above the input (an error of the last action). */
  error?: string;
  /** The current file and selection, offered with the next message. */
  pointing?: PointingChip;
}

/** Extension → webview. */
export type ToWebview =
  | { type: 'state'; state: ChatState }
  | { type: 'focusInput' }
  /** The `@` menu's entries for what follows the `@` typed. */
  | { type: 'mentions'; query: string; items: MentionItem[] }
  /** A mention the picker chose, to put in the input where the caret is. */
  | { type: 'insertMention'; text: string };

/** Webview → extension. */
export type FromWebview =
  | { type: 'ready' }
  /** `withPointing: false`: the person removed the current file's chip. */
  | { type: 'send'; text: string; withPointing?: boolean }
  /** A plan takes the same context as a message. */
  | { type: 'plan'; text: string; withPointing?: boolean }
  | { type: 'mentionQuery'; query: string }
  | { type: 'pickMention' }
  /** Rewind to before the turn of this entry (the person chooses code, conversation or both). */
  | { type: 'rewind'; key: string }
  | { type: 'undoRewind'; rewindId: string }
  | { type: 'approvePlan'; planId: string }
  | { type: 'dropPlan'; planId: string }
  | { type: 'scaffold'; planId: string; stepId: string }
  | { type: 'undoRun'; runId: string }
  | { type: 'stop' }
  | { type: 'openDiff'; proposalId: string }
  | { type: 'accept'; proposalId: string; hunks?: number[] }
  | { type: 'reject'; proposalId: string }
  | { type: 'decideHunk'; proposalId: string; hunk: number; accept: boolean }
  | { type: 'copy'; text: string }
  | { type: 'showProblems' }
  | { type: 'newSession' }
  | { type: 'switchSession'; sessionId: string }
  | { type: 'renameSession' }
  | { type: 'deleteSession' }
  | { type: 'toggleCustomization' }
  | { type: 'refreshCustomization' };

/** True when `value` is a message the webview may send (anything else is ignored). */
export function isFromWebview(value: unknown): value is FromWebview {
  if (!value || typeof value !== 'object') {
    return false;
  }
  const message = value as Record<string, unknown>;
  switch (message.type) {
    case 'ready':
    case 'stop':
    case 'showProblems':
    case 'newSession':
    case 'renameSession':
    case 'deleteSession':
    case 'toggleCustomization':
    case 'refreshCustomization':
    case 'pickMention':
      return true;
    case 'send':
    case 'plan':
      return typeof message.text === 'string' && (message.withPointing === undefined || typeof message.withPointing === 'boolean');
    case 'copy':
      return typeof message.text === 'string';
    case 'decideHunk':
      return typeof message.proposalId === 'string' && Number.isInteger(message.hunk) && typeof message.accept === 'boolean';
    case 'mentionQuery':
      return typeof message.query === 'string';
    case 'rewind':
      return typeof message.key === 'string';
    case 'undoRewind':
      return typeof message.rewindId === 'string';
    case 'approvePlan':
    case 'dropPlan':
      return typeof message.planId === 'string';
    case 'scaffold':
      return typeof message.planId === 'string' && typeof message.stepId === 'string';
    case 'undoRun':
      return typeof message.runId === 'string';
    case 'openDiff':
    case 'reject':
      return typeof message.proposalId === 'string';
    case 'accept':
      return (
        typeof message.proposalId === 'string' &&
        (message.hunks === undefined ||
          (Array.isArray(message.hunks) && message.hunks.every((n) => Number.isInteger(n))))
      );
    case 'switchSession':
      return typeof message.sessionId === 'string';
    default:
      return false;
  }
}
