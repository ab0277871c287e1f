/**
 * The chat view's markup, entry by entry, as strings: pure, so the unit tests read exactly what
 * the page shows. Every text from the model or the server passes through `escapeHtml` or
 * markdown-it with raw HTML disabled.
 */
import MarkdownIt from 'markdown-it';
import type { ChatEntry, ChatState, PlanCard, ProposalCard, RunEndEntry, RunStatus } from '../chat/messages';
import { planRunnable } from '../chat/messages';
import type { TestSummary } from '../protocol';

const markdown = new MarkdownIt({ html: false, linkify: true, breaks: false });
// Only links with a scheme: `calc.py` must not become a link to a host named calc.py.
markdown.linkify.set({ fuzzyLink: false, fuzzyEmail: false });

/** Text made safe to put between tags or in an attribute. */
export function escapeHtml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

/** The model's markdown as HTML; raw HTML in it is shown as text. */
export function renderMarkdown(text: string): string {
  return markdown.render(text);
}

/** Which hunks the person left ticked, per proposal (all of them until they untick one). */
export type HunkChoices = Map<string, Set<number>>;

const STATUS_LABEL: Record<string, string> = {
  running: 'running…',
  ok: 'done',
  failed: 'failed',
  waiting: 'waiting for review',
  rejected: 'rejected',
  denied: 'denied',
  pending: 'waiting for review',
  accepted: 'accepted',
  partially_accepted: 'partly accepted',
  stale: 'no longer applies',
  cancelled: 'cancelled',
  completed: 'completed',
};

function statusLabel(status: string): string {
  return STATUS_LABEL[status] ?? status.replace(/_/g, ' ');
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** `3 passed, 1 failed` and the rest that are not zero. */
export function testSummaryText(summary: TestSummary): string {
  const parts = [`${summary.passed} passed`];
  if (summary.failed) {
    parts.push(`${summary.failed} failed`);
  }
  if (summary.errors) {
    parts.push(plural(summary.errors, 'error'));
  }
  if (summary.skipped) {
    parts.push(`${summary.skipped} skipped`);
  }
  return parts.join(', ');
}

function button(action: string, label: string, attrs: Record<string, string> = {}, kind = ''): string {
  const extra = Object.entries(attrs)
    .map(([name, value]) => ` data-${name}="${escapeHtml(value)}"`)
    .join('');
  return `<button class="${kind}" data-action="${action}"${extra}>${escapeHtml(label)}</button>`;
}

function proposalCard(card: ProposalCard, choices: HunkChoices): string {
  const pending = card.status === 'pending';
  const head =
    `<div class="card-head"><span class="path">${escapeHtml(card.path)}</span>` +
    (card.isNewFile ? ' <span class="badge">new file</span>' : '') +
    // A card drawn from a stored transcript has no hunks to count.
    (card.hunks.length ? ` <span class="added">+${card.added}</span> <span class="removed">−${card.removed}</span>` : '') +
    ` <span class="badge status-${escapeHtml(card.status)}">${escapeHtml(statusLabel(card.status))}</span></div>`;
  const why = card.why ? `<div class="why">${renderMarkdown(card.why)}</div>` : '';
  let hunks = '';
  if (pending && card.hunks.length > 1) {
    const ticked = choices.get(card.id);
    hunks =
      `<fieldset class="hunks"><legend>Hunks to accept</legend>` +
      card.hunks
        .map((hunk) => {
          const checked = !ticked || ticked.has(hunk.index) ? ' checked' : '';
          return (
            `<label><input type="checkbox" data-proposal="${escapeHtml(card.id)}" data-hunk="${hunk.index}"${checked}> ` +
            `<code>${escapeHtml(hunk.header)}</code> <span class="added">+${hunk.added}</span> <span class="removed">−${hunk.removed}</span></label>`
          );
        })
        .join('') +
      `</fieldset>`;
  }
  let actions = '';
  if (pending) {
    const ticked = choices.get(card.id);
    const some = ticked !== undefined && ticked.size < card.hunks.length;
    actions =
      `<div class="card-actions">` +
      button('openDiff', 'Open Diff', { id: card.id }, 'secondary') +
      button('accept', some ? `Accept ${plural(ticked.size, 'hunk')}` : 'Accept', { id: card.id }) +
      button('reject', 'Reject…', { id: card.id }, 'secondary') +
      `</div>`;
  } else if (card.reason) {
    actions = `<div class="reason">${escapeHtml(card.reason)}</div>`;
  }
  return `${head}${why}${hunks}${actions}`;
}

function testsBlock(summary: TestSummary): string {
  const failing = summary.failed + summary.errors > 0;
  return (
    `<div class="tests ${failing ? 'failing' : 'passing'}">${escapeHtml(testSummaryText(summary))}` +
    (failing ? ` ${button('showProblems', 'Show failures in Problems', {}, 'link')}` : '') +
    `</div>`
  );
}

const GAP_REASON: Record<string, string> = {
  no_capability_match: 'no matching tool',
  schema_incompatible: 'contract does not fit',
  low_confidence: 'low confidence',
  invalid_capability: 'invalid capability',
};

/** A plan: its steps with capability and tool, gaps marked with a scaffold action, Approve / Drop. */
function planBlock(plan: PlanCard): string {
  const partial = plan.status !== 'ready';
  const id = { plan: plan.planId };
  const head =
    `<div class="card-head"><span class="plan-title">Plan</span> <span class="goal">${escapeHtml(plan.goal)}</span>` +
    ` <span class="badge plan-${partial ? 'partial' : 'ready'}">${partial ? 'partial — has gaps, does not run' : 'ready'}</span>` +
    (plan.decision ? ` <span class="badge decision">${plan.decision}</span>` : '') +
    `</div>`;
  const rows = plan.steps
    .map((step) => {
      const tool = step.tool
        ? `<span class="tool">→ <code>${escapeHtml(step.tool)}</code></span>`
        : step.gap?.scaffolded
          ? `<span class="tool">→ <code>${escapeHtml(step.gap.toolName)}</code> (scaffolded in ${escapeHtml(step.gap.scaffolded)})</span>`
          : `<span class="gap-mark">gap: no tool</span>`;
      let gap = '';
      if (step.gap && !step.tool && !step.gap.scaffolded) {
        const why = GAP_REASON[step.gap.reason] ?? step.gap.reason.replace(/_/g, ' ');
        gap =
          `<div class="gap-detail">${escapeHtml(step.gap.message)} (${escapeHtml(why)})` +
          // A step that names no capability cannot be filled by a new tool: nothing to scaffold.
          (!plan.decision && step.gap.reason !== 'invalid_capability'
            ? ` ${button('scaffold', `Scaffold missing tool ${step.gap.toolName}`, { ...id, step: step.stepId }, 'secondary')}`
            : '') +
          `</div>`;
      }
      return (
        `<li class="step${step.tool ? '' : ' gap'}" data-step="${escapeHtml(step.stepId)}">` +
        `<code class="step-id">${escapeHtml(step.stepId)}</code> <span class="capability">${escapeHtml(step.capability)}</span> ${tool}${gap}</li>`
      );
    })
    .join('');
  let actions = '';
  if (!plan.decision) {
    actions =
      `<div class="card-actions">` +
      (planRunnable(plan) ? button('approvePlan', 'Approve', id) : '') +
      button('dropPlan', 'Drop', id, 'secondary') +
      `</div>`;
  } else if (plan.decision === 'approved' && plan.runId) {
    // Once its run ends the card says how, as the run's own line does.
    const text = plan.runStatus
      ? `Ran as ${escapeHtml(plan.runId)} — ${escapeHtml(statusLabel(plan.runStatus))}`
      : `Running as ${escapeHtml(plan.runId)}`;
    actions = `<div class="reason">${text}</div>`;
  }
  return `${head}<ol class="steps">${rows}</ol>${actions}`;
}

/** The end of a run: how it ended, and Undo while its changes can be put back. */
function runEndBlock(entry: RunEndEntry): string {
  const files = entry.files.length ? ` — changed ${entry.files.map((f) => `<code>${escapeHtml(f)}</code>`).join(', ')}` : '';
  let undo = '';
  if (entry.undo === 'available') {
    // An undo's own undo re-applies the changes of the run it undid.
    const label = entry.undoes ? 'Redo (undo the undo)' : 'Undo this run';
    undo = ` ${button('undoRun', label, { run: entry.runId }, 'secondary')}`;
  } else if (entry.undo === 'undoing') {
    undo = ' <span class="badge">undoing…</span>';
  } else if (entry.undo === 'undone') {
    undo = ' <span class="badge status-undone">undone</span>';
  }
  const note = entry.undoNote ? `<div class="reason">${escapeHtml(entry.undoNote)}</div>` : '';
  if (entry.undoes) {
    const put = entry.files.length ? ` — put back ${entry.files.map((f) => `<code>${escapeHtml(f)}</code>`).join(', ')}` : '';
    return `Undid run ${escapeHtml(entry.undoes)}${put}${undo}${note}`;
  }
  return `Run ${escapeHtml(statusLabel(entry.status))}${files}${undo}${note}`;
}

/** One entry's markup, wrapped in an element keyed by the entry. */
export function renderEntry(entry: ChatEntry, choices: HunkChoices): string {
  const key = escapeHtml(entry.key);
  switch (entry.kind) {
    case 'user':
      return `<div class="entry user" data-key="${key}"><div class="who">You</div><div class="text">${escapeHtml(entry.text)}</div></div>`;
    case 'assistant':
      return `<div class="entry assistant" data-key="${key}"><div class="who">Toolgate</div><div class="markdown">${renderMarkdown(entry.text)}</div></div>`;
    case 'note':
      return `<div class="entry note" data-key="${key}">${escapeHtml(entry.text)}</div>`;
    case 'run':
      return `<div class="entry run-end" data-key="${key}" data-run="${escapeHtml(entry.runId)}">${runEndBlock(entry)}</div>`;
    case 'plan':
      return (
        `<div class="entry card plan" data-key="${key}" data-plan="${escapeHtml(entry.plan.planId)}" role="group" aria-label="Plan: ${escapeHtml(entry.plan.goal)}">` +
        `${planBlock(entry.plan)}</div>`
      );
    case 'tool': {
      const status = `<span class="badge status-${escapeHtml(entry.status)}">${escapeHtml(statusLabel(entry.status))}</span>`;
      if (entry.proposal) {
        return (
          `<div class="entry tool card proposal" data-key="${key}" role="group" aria-label="${escapeHtml(`${entry.name} ${entry.proposal.path}`)}">` +
          `<div class="tool-name">${escapeHtml(entry.name)}</div>${proposalCard(entry.proposal, choices)}</div>`
        );
      }
      const target = entry.target ? ` <code>${escapeHtml(entry.target)}</code>` : '';
      const line = `<span class="tool-name">${escapeHtml(entry.name)}</span>${target} ${status}`;
      if (entry.tests) {
        return (
          `<div class="entry tool card tests-card" data-key="${key}">${line}` +
          (entry.tests ? testsBlock(entry.tests) : '') +
          (entry.summary && !entry.tests ? `<div class="summary">${escapeHtml(entry.summary)}</div>` : '') +
          `</div>`
        );
      }
      // A read's line is marked as one, by the kind the server sent, never by the tool's name.
      const folded = entry.toolKind === 'read' ? ' read' : '';
      if (entry.summary) {
        return (
          `<details class="entry tool line${folded}" data-key="${key}"><summary>${line}</summary>` +
          `<div class="summary">${escapeHtml(entry.summary)}</div></details>`
        );
      }
      return `<div class="entry tool line${folded}" data-key="${key}">${line}</div>`;
    }
  }
}

/** The status line under the conversation. */
export function statusText(status: RunStatus): string {
  switch (status.state) {
    case 'running':
      return `Working${status.detail ? `: ${status.detail}` : ''}…`;
    case 'idle':
      return status.detail ? `Ready — last run ${status.detail}` : 'Ready';
    case 'planning':
      return 'Making a plan…';
    case 'starting':
      return 'Starting the server…';
    case 'stopped':
      return 'The server stopped';
    case 'error':
      return 'The server did not start';
    default:
      return status.state;
  }
}

/** The session picker's options. */
export function renderSessionOptions(state: ChatState): string {
  const options = state.sessions.map(
    (s) =>
      `<option value="${escapeHtml(s.id)}"${s.id === state.sessionId ? ' selected' : ''}>${escapeHtml(s.title)} (${plural(s.turns, 'turn')})</option>`,
  );
  if (!state.sessionId || !state.sessions.some((s) => s.id === state.sessionId)) {
    options.unshift(`<option value="" selected>${escapeHtml(state.title)}</option>`);
  }
  return options.join('');
}
