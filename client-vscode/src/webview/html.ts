/** The small pieces every part of the chat's markup uses: escaping, buttons, status words. */
import { icon } from './icons';

/** Text made safe to put between tags or in an attribute. */
export function escapeHtml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

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

/** A status as words. */
export function statusLabel(status: string): string {
  return STATUS_LABEL[status] ?? status.replace(/_/g, ' ');
}

/** `1 hunk`, `2 hunks`. */
export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** A button as VS Code draws one: primary, `secondary`, `link`, or `icon-button` (an icon alone). */
export function button(
  action: string,
  label: string,
  attrs: Record<string, string> = {},
  kind = '',
  options: { icon?: string; title?: string } = {},
): string {
  const extra = Object.entries(attrs)
    .map(([name, value]) => ` data-${name}="${escapeHtml(value)}"`)
    .join('');
  const title = options.title ? ` title="${escapeHtml(options.title)}"` : '';
  const iconOnly = kind.split(' ').includes('icon-button');
  const inner = iconOnly
    ? `${icon(options.icon ?? 'circle')}<span class="sr-only">${escapeHtml(label)}</span>`
    : `${options.icon ? icon(options.icon) : ''}${escapeHtml(label)}`;
  const aria = iconOnly ? ` aria-label="${escapeHtml(label)}"` : '';
  return `<button class="${kind}" data-action="${action}"${extra}${title}${aria}>${inner}</button>`;
}
