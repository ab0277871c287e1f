/**
 * Rewind in the chat view's markup: each kept turn's Rewind action, a rewind's own line with
 * the action that takes it back, and the turns a rewind took out shown as rewound. Pure
 * strings, as render.ts; `decorateEntry` adds them to an entry render.ts drew.
 */
import type { ChatEntry, RewindEntry } from '../chat/messages';
import { button, escapeHtml } from './html';
import { icon } from './icons';
import { renderAttached } from './mentions';

/** A rewind's line: what it did, and Take back while it is in effect. */
export function renderRewind(entry: RewindEntry): string {
  const action = entry.undone
    ? ' <span class="badge status-undone">taken back</span>'
    : entry.settled
      ? ' <span class="badge" title="The conversation went on after it: it can no longer be taken back">kept</span>'
      : ` ${button('undoRewind', 'Take back', { rewind: entry.rewindId }, 'secondary', { icon: 'redo', title: 'Undo this rewind: the turns and the files come back' })}`;
  const text = entry.text.charAt(0).toUpperCase() + entry.text.slice(1);
  return (
    `<div class="entry rewind-line" data-key="${escapeHtml(entry.key)}" title="${escapeHtml(entry.rewindId)}">` +
    `${icon('discard', 'rewind-mark')}<span class="rewind-text">${escapeHtml(text)}.</span>${action}</div>`
  );
}

/** The Rewind action of a turn the server keeps (not while a run goes on, not a rewound one). */
export function rewindAction(entry: ChatEntry, running: boolean): string {
  if (entry.kind !== 'user' || entry.rewound || running || !entry.runId || entry.runId === 'unsent') {
    return '';
  }
  const title = 'Rewind to before this turn: its code, its conversation, or both';
  return `<div class="turn-actions">${button('rewind', 'Rewind…', { key: entry.key }, 'icon-button', { icon: 'discard', title })}</div>`;
}

/**
 * An entry as render.ts drew it, with this module's parts: a turn's attached context and its
 * Rewind action before the end of its element, and the class `rewound` on a rewound entry.
 */
export function decorateEntry(entry: ChatEntry, html: string, running: boolean): string {
  let out = html;
  if (entry.kind === 'user') {
    const extra = renderAttached(entry) + rewindAction(entry, running);
    if (extra) {
      out = out.replace(/<\/div>\s*$/, `${extra}</div>`);
    }
  }
  if (entry.rewound) {
    out = out.replace(
      /^<(\w+) class="/,
      '<$1 title="Rewound: the model no longer sees this turn; the session keeps it" class="rewound ',
    );
  }
  return out;
}
