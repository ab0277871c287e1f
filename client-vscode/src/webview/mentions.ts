/**
 * The chat input's context: the `@` menu (typed `@` completes keywords, folders and files from
 * the workspace), the `@` button (the editor's picker), the chip of the current file and
 * selection the person may remove, and what a sent turn attached. Markup functions are pure;
 * `installMentions` wires them to the page.
 */
import type { ChatEntry, ChatState, FromWebview, PointingChip, ToWebview } from '../chat/messages';
import { insertMention, KEYWORD_MENTIONS, mentionAt, type MentionItem } from '../chat/mentions';
import { escapeHtml } from './html';
import { icon } from './icons';

type UserEntry = Extract<ChatEntry, { kind: 'user' }>;

/** Codicons as the workbench's own pickers show such entries. */
const KIND_ICON: Record<MentionItem['kind'], string> = { keyword: 'symbol-keyword', folder: 'folder', file: 'file' };

/** The `@` menu's options; `selected` is the highlighted one. */
export function renderMentionMenu(items: MentionItem[], selected: number): string {
  if (items.length === 0) {
    return '<div class="mention-empty">Nothing in the workspace matches</div>';
  }
  return items
    .map(
      (item, index) =>
        `<div class="mention-item kind-${item.kind}${index === selected ? ' selected' : ''}" role="option" id="mention-${index}"` +
        ` data-index="${index}" aria-selected="${index === selected}">${icon(KIND_ICON[item.kind], 'mention-icon')}` +
        `<span class="mention-text">${escapeHtml(item.text)}</span> <span class="mention-description">${escapeHtml(item.description)}</span></div>`,
    )
    .join('');
}

/** The chip of what goes along with the next message; empty when nothing does. */
export function renderChip(chip: PointingChip | undefined): string {
  if (!chip) {
    return '';
  }
  const what = chip.selection ? 'the selected lines' : 'the file you are looking at';
  return (
    `<span class="chip pointing-chip" title="Sent with the next message: ${escapeHtml(what)}">` +
    `${icon(chip.selection ? 'selection' : 'file')}<span class="chip-label">${escapeHtml(chip.label)}</span>` +
    `<button class="chip-remove" data-action="removePointing" aria-label="Do not send ${escapeHtml(chip.label)} with the message" title="Do not send it">${icon('close')}</button></span>`
  );
}

/** The icon of a sent mention: a keyword's, a folder's (it ends in `/`), else a file's. */
function mentionIcon(mention: string): string {
  if (KEYWORD_MENTIONS.some((keyword) => keyword.text === mention)) {
    return KIND_ICON.keyword;
  }
  return mention.replace(/"$/, '').endsWith('/') ? KIND_ICON.folder : KIND_ICON.file;
}

/** What a turn attached: the file it was sent with, each mention's context, what was refused. */
export function renderAttached(entry: UserEntry): string {
  const chips: string[] = [];
  if (entry.pointed) {
    chips.push(`<span class="chip" title="Sent with the message: the file you were looking at">${icon(/:\d/.test(entry.pointed) ? 'selection' : 'file')}${escapeHtml(entry.pointed)}</span>`);
  }
  for (const item of entry.attached ?? []) {
    const cut = item.cut ? ` — cut to fit: ${item.cut}` : '';
    chips.push(
      `<span class="chip attached${item.cut ? ' cut' : ''}" title="${escapeHtml(`${item.label}${cut}`)}">${icon(mentionIcon(item.mention))}${escapeHtml(item.mention)}` +
        (item.cut ? ' <span class="chip-note">cut</span>' : '') +
        `</span>`,
    );
  }
  for (const refused of entry.notAttached ?? []) {
    chips.push(`<span class="chip refused" title="Not attached">${icon('warning')}${escapeHtml(refused)}</span>`);
  }
  return chips.length ? `<div class="attached-line" aria-label="Attached to this message">${chips.join('')}</div>` : '';
}

/** The page's elements the mentions use. */
export interface MentionElements {
  input: HTMLTextAreaElement;
  menu: HTMLElement;
  chip: HTMLElement;
  pick: HTMLButtonElement;
}

/** What main.ts asks of the mentions. */
export interface Mentions {
  /** Added to a `send`: the person removed the chip. */
  sendFields(): Pick<Extract<FromWebview, { type: 'send' | 'plan' }>, 'withPointing'>;
  /** A new state: the chip follows the editor. */
  onState(state: ChatState): void;
  /** A message from the extension for the mentions; false when it is not one. */
  onMessage(message: ToWebview): boolean;
  /** Whether the `@` menu is open. */
  open(): boolean;
}

/**
 * Wire the `@` menu, the picker and the chip. Call before main.ts adds its own keydown
 * listener: an open menu takes Enter, Tab and the arrows first.
 */
export function installMentions(elements: MentionElements, post: (message: FromWebview) => void): Mentions {
  const { input, menu, chip, pick } = elements;
  let items: MentionItem[] = [];
  let selected = 0;
  let asked: string | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let pointing: PointingChip | undefined;
  /** The chip the person removed; it comes back when the file or selection changes. */
  let removed: string | undefined;
  let drawnChip = '';

  function close(): void {
    if (!menu.hidden) {
      input.removeAttribute('aria-activedescendant');
    }
    menu.hidden = true;
    items = [];
    asked = undefined;
  }

  function typed(): { start: number; query: string } | undefined {
    return mentionAt(input.value, input.selectionStart ?? input.value.length);
  }

  function update(): void {
    const at = typed();
    if (!at) {
      close();
      return;
    }
    if (asked === at.query) {
      return;
    }
    asked = at.query;
    clearTimeout(timer);
    timer = setTimeout(() => post({ type: 'mentionQuery', query: at.query }), 60);
  }

  function draw(): void {
    menu.innerHTML = renderMentionMenu(items, selected);
    menu.hidden = false;
    // Screen readers follow the highlighted entry while the focus stays in the input.
    if (items.length) {
      input.setAttribute('aria-activedescendant', `mention-${selected}`);
    }
    menu.querySelector('.selected')?.scrollIntoView({ block: 'nearest' });
  }

  function choose(index: number): void {
    const item = items[index];
    const at = typed();
    if (!item || !at) {
      return;
    }
    put(at.start, input.selectionStart ?? input.value.length, item.text);
  }

  function put(start: number, caret: number, text: string): void {
    const next = insertMention(input.value, start, caret, text);
    input.value = next.text;
    input.focus();
    input.setSelectionRange(next.caret, next.caret);
    close();
    if (text.endsWith('/')) {
      update(); // a folder: its files next
    }
    input.dispatchEvent(new Event('input'));
  }

  function drawChip(): void {
    const shown = pointing && pointing.label !== removed ? pointing : undefined;
    const html = renderChip(shown);
    if (html !== drawnChip) {
      chip.innerHTML = html;
      chip.hidden = !html;
      drawnChip = html;
    }
  }

  input.addEventListener('input', update);
  input.addEventListener('click', update);
  input.addEventListener('keydown', (event) => {
    if (menu.hidden || event.isComposing) {
      return;
    }
    const count = items.length;
    if ((event.key === 'ArrowDown' || event.key === 'ArrowUp') && count) {
      selected = (selected + (event.key === 'ArrowDown' ? 1 : count - 1)) % count;
      draw();
    } else if (((event.key === 'Enter' && !event.shiftKey) || event.key === 'Tab') && count) {
      choose(selected);
    } else if (event.key === 'Escape') {
      close();
    } else {
      return;
    }
    event.preventDefault();
    event.stopImmediatePropagation();
  });
  input.addEventListener('blur', () => setTimeout(close, 150));
  // mousedown, not click: the input keeps the focus.
  menu.addEventListener('mousedown', (event) => {
    const item = (event.target as Element).closest('.mention-item') as HTMLElement | null;
    if (item) {
      event.preventDefault();
      choose(Number(item.dataset.index));
    }
  });
  pick.addEventListener('click', () => post({ type: 'pickMention' }));
  chip.addEventListener('click', (event) => {
    if ((event.target as Element).closest('[data-action="removePointing"]')) {
      removed = pointing?.label;
      drawChip();
      input.focus();
    }
  });

  return {
    sendFields() {
      return pointing && pointing.label === removed ? { withPointing: false } : {};
    },
    onState(state) {
      pointing = state.pointing;
      if (removed !== undefined && pointing?.label !== removed) {
        removed = undefined;
      }
      drawChip();
    },
    onMessage(message) {
      if (message.type === 'mentions') {
        if (message.query === typed()?.query) {
          const previous = items[selected]?.text;
          items = message.items;
          const kept = items.findIndex((item) => item.text === previous);
          selected = kept >= 0 ? kept : 0;
          draw();
        }
        return true;
      }
      if (message.type === 'insertMention') {
        const caret = input.selectionStart ?? input.value.length;
        const at = typed();
        if (at) {
          put(at.start, caret, message.text);
        } else {
          // Where the caret is, as a word of its own.
          const before = input.value.slice(0, caret);
          const spaced = before && !/\s$/.test(before) ? `${before} ` : before;
          input.value = spaced + input.value.slice(caret);
          put(spaced.length, spaced.length, message.text);
        }
        return true;
      }
      return false;
    },
    open: () => !menu.hidden,
  };
}
