/**
 * A proposal's change drawn in its card: each hunk's removed and added lines, numbered and
 * highlighted in the file's language, with Accept and Reject per hunk (the same decisions as
 * the diff editor's CodeLens: the proposal is answered once every hunk has one).
 */
import type { HunkCard, ProposalCard } from '../chat/messages';
import { highlight } from './code';
import { button, escapeHtml } from './html';
import { icon } from './icons';

/** Lines a hunk shows before the rest is left to Open Diff. */
const MAX_LINES = 40;

const LANGUAGE_BY_EXTENSION: Record<string, string> = {
  py: 'python',
  pyi: 'python',
  ts: 'typescript',
  tsx: 'typescript',
  js: 'javascript',
  jsx: 'javascript',
  mjs: 'javascript',
  json: 'json',
  sh: 'bash',
  css: 'css',
  go: 'go',
  rs: 'rust',
  sql: 'sql',
  yml: 'yaml',
  yaml: 'yaml',
  toml: 'ini',
  ini: 'ini',
  md: 'markdown',
  html: 'xml',
  xml: 'xml',
};

/** The highlighter's language for a path, by its extension (undefined: plain text). */
export function languageOf(path: string): string | undefined {
  const match = /\.([^./\\]+)$/.exec(path);
  return match ? LANGUAGE_BY_EXTENSION[match[1].toLowerCase()] : undefined;
}

function splitLines(text: string | undefined): string[] {
  if (!text) {
    return [];
  }
  const lines = text.split('\n');
  return text.endsWith('\n') ? lines.slice(0, -1) : lines;
}

function row(kind: 'added' | 'removed', number: number, text: string, language: string | undefined): string {
  const sign = kind === 'added' ? '+' : '−';
  return (
    `<div class="diff-line ${kind}"><span class="diff-number">${number}</span><span class="diff-sign" aria-hidden="true">${sign}</span>` +
    `<span class="diff-text">${highlight(text, language) || ' '}</span></div>`
  );
}

function hunkLines(hunk: HunkCard, language: string | undefined): string {
  const start = hunk.line ?? 1;
  const removed = splitLines(hunk.oldText).map((text, i) => row('removed', start + i, text, language));
  const added = splitLines(hunk.newText).map((text, i) => row('added', start + i, text, language));
  const lines = [...removed, ...added];
  const more = lines.length > MAX_LINES ? `<div class="diff-more">… ${lines.length - MAX_LINES} more lines: Open Diff shows them</div>` : '';
  return `<div class="diff-lines" role="group" aria-label="Lines of this hunk">${lines.slice(0, MAX_LINES).join('')}${more}</div>`;
}

/** One hunk: its header and counts, its own Accept / Reject while the proposal waits, its lines. */
function hunkBlock(card: ProposalCard, hunk: HunkCard, language: string | undefined): string {
  const pending = card.status === 'pending';
  const id = { id: card.id, hunk: String(hunk.index) };
  let decide = '';
  if (hunk.decision) {
    decide = `<span class="hunk-decision ${hunk.decision}">${icon(hunk.decision === 'accepted' ? 'check' : 'close')}${hunk.decision}</span>`;
  } else if (pending && card.hunks.length > 1) {
    decide =
      `<span class="hunk-actions">` +
      button('acceptHunk', 'Accept this hunk', id, 'icon-button', { icon: 'check', title: 'Accept this hunk' }) +
      button('rejectHunk', 'Reject this hunk', id, 'icon-button', { icon: 'discard', title: 'Reject this hunk' }) +
      `</span>`;
  }
  return (
    `<div class="hunk${hunk.decision ? ` decided ${hunk.decision}` : ''}" data-hunk-index="${hunk.index}">` +
    `<div class="hunk-head"><code class="hunk-header">${escapeHtml(hunk.header)}</code>` +
    ` <span class="added">+${hunk.added}</span> <span class="removed">−${hunk.removed}</span>${decide}</div>` +
    (hunk.oldText !== undefined || hunk.newText !== undefined ? hunkLines(hunk, language) : '') +
    `</div>`
  );
}

/** The proposal's hunks, in order; '' when the card has none to show (read from a transcript). */
export function inlineDiff(card: ProposalCard): string {
  if (!card.hunks.length) {
    return '';
  }
  const language = languageOf(card.path);
  return `<div class="inline-diff">${card.hunks.map((hunk) => hunkBlock(card, hunk, language)).join('')}</div>`;
}
