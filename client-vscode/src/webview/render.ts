/**
 * The chat view's markup, entry by entry, as strings: pure, so the unit tests read exactly what
 * the page shows. Every text from the model or the server passes through `escapeHtml` or
 * markdown-it with raw HTML disabled.
 */
import MarkdownIt from 'markdown-it';
import type {
  ChatEntry,
  ChatState,
  CustomizationPanel,
  PlanCard,
  ProposalCard,
  RunEndEntry,
  RunStatus,
  SlashCommand,
} from '../chat/messages';
import { planRunnable } from '../chat/messages';
import { problemsBlock } from './problems';
import { runName } from '../words';
import type { Customization, TestSummary } from '../protocol';
import { useCodeBlocks } from './code';
import { inlineDiff } from './diffView';
import { button, escapeHtml, plural, statusLabel } from './html';
import { icon, statusIcon } from './icons';
import { toolDetails, toolLine, toolRow } from './toolRow';
import { renderRewind } from './rewind';

const markdown = new MarkdownIt({ html: false, linkify: true, breaks: false });
useCodeBlocks(markdown);
// Only links with a scheme: `calc.py` must not become a link to a host named calc.py.
markdown.linkify.set({ fuzzyLink: false, fuzzyEmail: false });

/** The model's markdown as HTML; raw HTML in it is shown as text; code blocks highlighted. */
export function renderMarkdown(text: string): string {
  return markdown.render(text);
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

function proposalCard(card: ProposalCard): string {
  const pending = card.status === 'pending';
  const head =
    `<div class="card-head">${icon(card.isNewFile ? 'new-file' : 'diff')}<span class="path">${escapeHtml(card.path)}</span>` +
    (card.isNewFile ? ' <span class="badge">new file</span>' : '') +
    // A card drawn from a stored transcript has no hunks to count.
    (card.hunks.length ? ` <span class="added">+${card.added}</span> <span class="removed">−${card.removed}</span>` : '') +
    ` <span class="badge status-${escapeHtml(card.status)}">${escapeHtml(statusLabel(card.status))}</span></div>`;
  const why = card.why ? `<div class="why">${renderMarkdown(card.why)}</div>` : '';
  // While it waits the change is in view; once decided it folds away, still there to look at.
  const diff = inlineDiff(card);
  const change = !diff ? '' : pending ? diff : `<details class="diff-fold"><summary>The change</summary>${diff}</details>`;
  let actions = '';
  if (pending) {
    const decided = card.hunks.filter((hunk) => hunk.decision).length;
    const left = card.hunks.length - decided;
    actions =
      `<div class="card-actions">` +
      button('accept', decided ? (left === 1 ? 'Accept the other hunk' : `Accept the other ${left} hunks`) : 'Accept', { id: card.id }, '', { icon: 'check' }) +
      button('reject', 'Reject…', { id: card.id }, 'secondary', { icon: 'close' }) +
      button('openDiff', 'Open Diff', { id: card.id }, 'secondary', { icon: 'diff' }) +
      `</div>`;
  } else if (card.reason) {
    actions = `<div class="reason">${escapeHtml(card.reason)}</div>`;
  }
  return `${head}${why}${change}${actions}${problemsBlock(card.problems)}`;
}

function testsBlock(summary: TestSummary): string {
  const failing = summary.failed + summary.errors > 0;
  return (
    `<div class="tests ${failing ? 'failing' : 'passing'}">${escapeHtml(testSummaryText(summary))}` +
    (failing ? ` ${button('showProblems', 'Show failures in Problems', {}, 'link', { icon: 'warning' })}` : '') +
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
    const text = plan.runStatus ? `Ran — ${escapeHtml(statusLabel(plan.runStatus))}` : 'Running…';
    actions = `<div class="reason" title="run ${escapeHtml(plan.runId)}">${text}</div>`;
  }
  return `${head}<ol class="steps">${rows}</ol>${actions}`;
}

/** The end of a run: how it ended, and Undo while its changes can be put back. */
function runEndBlock(entry: RunEndEntry): string {
  const fileList = (files: string[]) => files.map((f) => `<code>${escapeHtml(f)}</code>`).join(', ');
  const files = entry.files.length ? ` — changed ${fileList(entry.files)}` : '';
  let undo = '';
  if (entry.undo === 'available') {
    // An undo's own undo re-applies the changes of the run it undid.
    undo = entry.undoes
      ? ` ${button('undoRun', 'Redo (undo the undo)', { run: entry.runId }, 'secondary', { icon: 'redo' })}`
      : ` ${button('undoRun', 'Undo this run', { run: entry.runId }, 'secondary', { icon: 'discard' })}`;
  }
  // The badge reads as part of the line; the button sits after it.
  const badge =
    entry.undo === 'undoing'
      ? ` <span class="badge">${icon('loading', 'codicon-modifier-spin')} undoing…</span>`
      : entry.undo === 'undone'
        ? ' <span class="badge status-undone">undone</span>'
        : '';
  const note = entry.undoNote ? `<div class="reason">${escapeHtml(entry.undoNote)}</div>` : '';
  if (entry.undoes) {
    const put = entry.files.length ? ` — put back ${fileList(entry.files)}` : '';
    return `<span class="run-line">${icon('discard')} Undid ${escapeHtml(runName(entry.undoesStartedAt, entry.undoesAnUndo ? 'undo' : 'run'))}${put}${badge}</span>${undo}${note}`;
  }
  const ok = entry.status === 'completed';
  const mark = statusIcon(ok ? 'completed' : entry.status === 'cancelled' ? 'cancelled' : 'failed');
  return `<span class="run-line">${mark} Run ${escapeHtml(statusLabel(entry.status))}${files}${badge}</span>${undo}${note}`;
}

/** One entry's markup, wrapped in an element keyed by the entry. */
export function renderEntry(entry: ChatEntry): string {
  const key = escapeHtml(entry.key);
  switch (entry.kind) {
    case 'user': {
      // The turn's header names the rules files it used (its system prompt's, then those
      // attached as it read or changed files).
      const rules = entry.rules?.length
        ? ` <span class="rules" title="Rules files this turn used">rules: ${entry.rules.map((f) => `<code>${escapeHtml(f)}</code>`).join(', ')}</span>`
        : '';
      return `<div class="entry user" data-key="${key}"><div class="who">You${rules}</div><div class="text">${escapeHtml(entry.text)}</div></div>`;
    }
    case 'assistant':
      return `<div class="entry assistant" data-key="${key}"><div class="who">Toolgate</div><div class="markdown">${renderMarkdown(entry.text)}</div></div>`;
    case 'note':
      return `<div class="entry note" data-key="${key}">${escapeHtml(entry.text)}</div>`;
    case 'run': {
      const ids = entry.undoes ? `undo ${entry.runId} of run ${entry.undoes}` : `run ${entry.runId}`;
      return `<div class="entry run-end" data-key="${key}" data-run="${escapeHtml(entry.runId)}" title="${escapeHtml(ids)}">${runEndBlock(entry)}</div>`;
    }
    case 'rewind':
      return renderRewind(entry);
    case 'plan':
      return (
        `<div class="entry card plan" data-key="${key}" data-plan="${escapeHtml(entry.plan.planId)}" role="group" aria-label="Plan: ${escapeHtml(entry.plan.goal)}">` +
        `${planBlock(entry.plan)}</div>`
      );
    case 'tool': {
      if (entry.proposal) {
        return (
          `<div class="entry tool card proposal" data-key="${key}" role="group" aria-label="${escapeHtml(`${entry.name} ${entry.proposal.path}`)}" title="proposal ${escapeHtml(entry.proposal.id)}">` +
          `<div class="tool-name">${escapeHtml(entry.name)}</div>${proposalCard(entry.proposal)}</div>`
        );
      }
      if (entry.tests) {
        return (
          `<div class="entry tool card tests-card" data-key="${key}"><div class="card-line">${toolLine(entry)}</div>` +
          testsBlock(entry.tests) +
          `<details class="tool-more" data-fold="tool"><summary>Details</summary>${toolDetails(entry)}</details></div>`
        );
      }
      return toolRow(entry, key);
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

/** The menu's query when the input is a `/` command being typed (no space yet); else undefined. */
export function slashQuery(text: string): string | undefined {
  const match = /^\/(\S*)$/.exec(text);
  return match ? match[1] : undefined;
}

/** The commands a query matches: names starting with it first, then names that hold it. */
export function matchCommands(commands: SlashCommand[], query: string): SlashCommand[] {
  const q = query.toLowerCase();
  const starts = commands.filter((c) => c.name.toLowerCase().startsWith(q));
  const holds = commands.filter((c) => !c.name.toLowerCase().startsWith(q) && c.name.toLowerCase().includes(q));
  return [...starts, ...holds];
}

/** The `/` menu's options; `selected` is the highlighted one (aria-selected). */
export function renderSlashMenu(items: SlashCommand[], selected: number): string {
  if (items.length === 0) {
    return '<div class="slash-empty">No command matches</div>';
  }
  return items
    .map((item, index) => {
      const hint = item.argumentHint ? ` <span class="slash-hint">${escapeHtml(item.argumentHint)}</span>` : '';
      const source = item.source === 'built-in' ? '' : `<span class="slash-source">${escapeHtml(item.source)}</span>`;
      return (
        `<div class="slash-item${index === selected ? ' selected' : ''}" role="option" id="slash-${index}" data-index="${index}"` +
        ` aria-selected="${index === selected}"><span class="slash-name">/${escapeHtml(item.name)}</span>${hint}` +
        ` <span class="slash-description">${escapeHtml(item.description)}</span>${source}</div>`
      );
    })
    .join('');
}

const APPLIES: Record<string, string> = {
  always: 'always',
  globs: 'for matching files',
  on_request: 'when the model asks for it',
  manual: 'when named',
};

function section(title: string, count: number, body: string, empty: string): string {
  return (
    `<details class="custom-section" open><summary>${escapeHtml(title)} <span class="badge">${count}</span></summary>` +
    (count ? `<ul>${body}</ul>` : `<div class="custom-none">${escapeHtml(empty)}</div>`) +
    `</details>`
  );
}

function where(source: string): string {
  return `<span class="custom-source">${escapeHtml(source)}</span>`;
}

/** The Customization panel: what customizes the agent here and where each piece came from. */
export function renderCustomization(panel: CustomizationPanel): string {
  const head =
    `<div class="custom-head"><span class="custom-title">Customization</span>` +
    (panel.loading ? ' <span class="custom-loading">reading…</span>' : '') +
    ` ${button('refreshCustomization', 'Refresh', {}, 'icon')}</div>`;
  if (panel.error && !panel.data) {
    return `${head}<div class="error">${escapeHtml(panel.error)}</div>`;
  }
  const data: Customization | undefined = panel.data;
  if (!data) {
    return `${head}<div class="custom-none">Reading what customizes the agent…</div>`;
  }
  const list = <T>(items: T[] | undefined): T[] => (Array.isArray(items) ? items : []);
  const rules = list(data.rules)
    .map((r) => `<li><code>${escapeHtml(r.file)}</code> — ${escapeHtml(APPLIES[r.applies] ?? r.applies)} ${where(r.source)}</li>`)
    .join('');
  const skills = list(data.skills)
    .map((k) => `<li><b>${escapeHtml(k.name)}</b> — ${escapeHtml(k.description)} <code>${escapeHtml(k.file)}</code></li>`)
    .join('');
  const commands = list(data.commands)
    .map(
      (c) =>
        `<li><b>/${escapeHtml(c.name)}</b>${c.argumentHint ? ` <span class="slash-hint">${escapeHtml(c.argumentHint)}</span>` : ''}` +
        `${c.description ? ` — ${escapeHtml(c.description)}` : ''} <code>${escapeHtml(c.file)}</code></li>`,
    )
    .join('');
  const hooks = list(data.hooks)
    .map(
      (h) =>
        `<li><b>${escapeHtml(h.event)}</b>${h.matcher ? ` <code>${escapeHtml(h.matcher)}</code>` : ''} runs <code>${escapeHtml(h.command)}</code> ` +
        `<span class="badge ${h.trusted ? 'trusted' : 'untrusted'}">${h.trusted ? 'runs' : 'waits for your confirmation'}</span> ${where(h.source)}</li>`,
    )
    .join('');
  const mcp = list(data.mcpServers)
    .map((m) => `<li><b>${escapeHtml(m.name)}</b> — ${escapeHtml(m.state)} ${where(m.source)}</li>`)
    .join('');
  const problems = [...list(data.problems), ...list(data.notices)]
    .map((p) => `<li>${escapeHtml(p)}</li>`)
    .join('');
  return (
    head +
    (panel.error ? `<div class="error">${escapeHtml(panel.error)}</div>` : '') +
    section('Rules', list(data.rules).length, rules, 'No rules file (AGENTS.md, CLAUDE.md, …) found.') +
    section('Skills', list(data.skills).length, skills, 'No skill found.') +
    section('Commands', list(data.commands).length, commands, 'No prompt file found.') +
    section('Hooks', list(data.hooks).length, hooks, 'No hook configured.') +
    section('MCP servers', list(data.mcpServers).length, mcp, 'No MCP server configured.') +
    (problems ? `<details class="custom-section problems" open><summary>Problems and notices <span class="badge">${list(data.problems).length + list(data.notices).length}</span></summary><ul>${problems}</ul></details>` : '')
  );
}
