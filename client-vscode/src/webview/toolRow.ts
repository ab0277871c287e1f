/**
 * A tool call as one row that opens: what it did to what, how long it took and how it ended
 * on the row; its arguments and its result inside, as Copilot's and Cline's chats show them.
 */
import type { ChatEntry } from '../chat/messages';
import { durationText } from '../words';
import { codeBlock } from './code';
import { escapeHtml, statusLabel } from './html';
import { kindIcon, statusIcon } from './icons';

type ToolEntry = Extract<ChatEntry, { kind: 'tool' }>;

const MAX_ARGUMENT_CHARS = 4000;

/** The row's one line: the kind's icon, the tool, its target, the duration and the status. */
export function toolLine(entry: ToolEntry): string {
  const target = entry.target ? ` <code class="tool-target">${escapeHtml(entry.target)}</code>` : '';
  const took = entry.durationMs !== undefined ? `<span class="tool-duration">${escapeHtml(durationText(entry.durationMs))}</span>` : '';
  return (
    `<span class="tool-line">${kindIcon(entry.toolKind)}<span class="tool-name">${escapeHtml(entry.name)}</span>${target}` +
    `<span class="tool-end">${took}<span class="tool-status status-${escapeHtml(entry.status)}" title="${escapeHtml(statusLabel(entry.status))}">` +
    `${statusIcon(entry.status)}<span class="tool-status-text">${escapeHtml(statusLabel(entry.status))}</span></span></span></span>`
  );
}

function argumentsText(args: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(args, null, 2) ?? '';
  } catch {
    text = String(args);
  }
  return text.length > MAX_ARGUMENT_CHARS ? `${text.slice(0, MAX_ARGUMENT_CHARS)}\n…` : text;
}

/** What is inside the row: why the model called it, its arguments, its result or its error. */
export function toolDetails(entry: ToolEntry): string {
  const parts: string[] = [];
  if (entry.why) {
    parts.push(`<div class="tool-why">${escapeHtml(entry.why)}</div>`);
  }
  const args = entry.arguments;
  const hasArgs = args !== undefined && args !== null && !(typeof args === 'object' && Object.keys(args).length === 0);
  if (hasArgs) {
    parts.push(`<div class="tool-section"><div class="tool-section-title">Arguments</div>${codeBlock(argumentsText(args), 'json')}</div>`);
  }
  const failed = entry.status === 'failed' || entry.status === 'denied' || entry.status === 'rejected';
  const result = entry.result ?? entry.summary;
  if (result) {
    parts.push(
      `<div class="tool-section"><div class="tool-section-title">${failed ? 'Error' : 'Result'}</div>` +
        `<pre class="tool-result${failed ? ' failed' : ''}">${escapeHtml(result)}</pre></div>`,
    );
  } else if (entry.status === 'running') {
    parts.push(`<div class="tool-section tool-pending">Running…</div>`);
  }
  if (entry.durationMs !== undefined) {
    parts.push(`<div class="tool-took">Took ${escapeHtml(durationText(entry.durationMs))}</div>`);
  }
  return `<div class="tool-body">${parts.join('')}</div>`;
}

/** A tool call that is not a proposal nor a test run: a collapsible row. */
export function toolRow(entry: ToolEntry, key: string): string {
  // A read's row is marked as one, by the kind the server sent, never by the tool's name.
  const read = entry.toolKind === 'read' ? ' read' : '';
  return (
    `<details class="entry tool row${read}" data-key="${key}" data-fold="tool" title="call ${escapeHtml(entry.callId)}">` +
    `<summary>${toolLine(entry)}</summary>${toolDetails(entry)}</details>`
  );
}
