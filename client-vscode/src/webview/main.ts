/**
 * The chat view's page script (bundled to dist/webview.js). It draws the state the extension
 * sends, entry by entry (an entry whose markup did not change keeps its DOM, so focus and
 * ticked boxes survive streamed text), and reports clicks and keys as messages.
 */
import type { ChatState, FromWebview, SlashCommand, ToWebview } from '../chat/messages';
import {
  matchCommands,
  renderCustomization,
  renderEntry,
  renderSessionOptions,
  renderSlashMenu,
  slashQuery,
  statusText,
} from './render';
import { copied, keepFolds } from './folds';
import { installMentions } from './mentions';
import { decorateEntry } from './rewind';

interface VsCodeApi {
  postMessage(message: FromWebview): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

const vscode = acquireVsCodeApi();
const log = document.getElementById('log') as HTMLElement;
const input = document.getElementById('input') as HTMLTextAreaElement;
const send = document.getElementById('send') as HTMLButtonElement;
const stop = document.getElementById('stop') as HTMLButtonElement;
const plan = document.getElementById('plan') as HTMLButtonElement;
const status = document.getElementById('status') as HTMLElement;
const error = document.getElementById('error') as HTMLElement;
const session = document.getElementById('session') as HTMLSelectElement;
const menu = document.getElementById('slash-menu') as HTMLElement;
const panel = document.getElementById('customization') as HTMLElement;
const toggleCustomization = document.getElementById('toggle-customization') as HTMLButtonElement;
const mentions = installMentions(
  {
    input,
    menu: document.getElementById('mention-menu') as HTMLElement,
    chip: document.getElementById('pointing') as HTMLElement,
    pick: document.getElementById('mention-pick') as HTMLButtonElement,
  },
  (message) => vscode.postMessage(message),
);
const drawn = new Map<string, string>();
let current: ChatState | undefined;
let drawnOptions = '';
let drawnPanel = '';
/** The `/` menu: what it offers now, the highlighted one, and the text it was closed for. */
let menuItems: SlashCommand[] = [];
let menuSelected = 0;
let menuDismissed: string | undefined;

function atBottom(): boolean {
  return log.scrollHeight - log.scrollTop - log.clientHeight < 40;
}

function draw(state: ChatState): void {
  current = state;
  const follow = atBottom();
  const keys = new Set(state.entries.map((entry) => entry.key));
  for (const [key] of drawn) {
    if (!keys.has(key)) {
      log.querySelector(`[data-key="${CSS.escape(key)}"]`)?.remove();
      drawn.delete(key);
    }
  }
  let previous: Element | null = null;
  const running = state.status.state === 'running';
  for (const entry of state.entries) {
    const html = decorateEntry(entry, renderEntry(entry), running);
    let element = log.querySelector(`:scope > [data-key="${CSS.escape(entry.key)}"]`);
    if (!element || drawn.get(entry.key) !== html) {
      const template = document.createElement('template');
      template.innerHTML = html;
      const fresh = template.content.firstElementChild as Element;
      if (element) {
        const focused = document.activeElement;
        if (focused instanceof HTMLElement && element.contains(focused)) {
          // Keep the keyboard where it was: the same button or box in the redrawn card.
          const same = focused.dataset.action
            ? `[data-action="${CSS.escape(focused.dataset.action)}"]`
            : focused.dataset.hunk
              ? `[data-hunk="${CSS.escape(focused.dataset.hunk)}"]`
              : 'button, input';
          queueMicrotask(() => ((fresh.querySelector(same) ?? fresh.querySelector('button, input')) as HTMLElement | null)?.focus());
        }
        keepFolds(element, fresh);
        element.replaceWith(fresh);
      } else if (previous) {
        previous.after(fresh);
      } else {
        log.prepend(fresh);
      }
      element = fresh;
      drawn.set(entry.key, html);
    }
    previous = element;
  }
  if (state.entries.length === 0) {
    log.classList.add('empty');
  } else {
    log.classList.remove('empty');
  }
  stop.hidden = !running;
  mentions.onState(state);
  status.textContent = statusText(state.status);
  status.dataset.state = state.status.state;
  error.hidden = !state.error;
  error.textContent = state.error ?? '';
  const options = renderSessionOptions(state);
  // Redrawn only when it changes: an open drop-down must not close under streamed text.
  if (options !== drawnOptions) {
    session.innerHTML = options;
    drawnOptions = options;
  }
  panel.hidden = !state.customization.open;
  toggleCustomization.setAttribute('aria-expanded', String(state.customization.open));
  const panelHtml = state.customization.open ? renderCustomization(state.customization) : '';
  if (panelHtml !== drawnPanel) {
    panel.innerHTML = panelHtml;
    drawnPanel = panelHtml;
  }
  updateMenu();
  if (follow) {
    log.scrollTop = log.scrollHeight;
  }
}

function closeMenu(): void {
  menu.hidden = true;
  menuItems = [];
  input.setAttribute('aria-expanded', 'false');
  input.removeAttribute('aria-activedescendant');
}

/** Open, filter or close the `/` menu for what the input holds now. */
function updateMenu(): void {
  const query = slashQuery(input.value);
  if (query === undefined || !current || menuDismissed === input.value) {
    closeMenu();
    return;
  }
  const previous = menuItems[menuSelected]?.name;
  menuItems = matchCommands(current.commands, query);
  const kept = menuItems.findIndex((item) => item.name === previous);
  menuSelected = kept >= 0 ? kept : 0;
  menu.innerHTML = renderSlashMenu(menuItems, menuSelected);
  menu.hidden = false;
  input.setAttribute('aria-expanded', 'true');
  if (menuItems.length) {
    input.setAttribute('aria-activedescendant', `slash-${menuSelected}`);
    menu.querySelector('.selected')?.scrollIntoView({ block: 'nearest' });
  } else {
    input.removeAttribute('aria-activedescendant');
  }
}

/** Put the picked command in the input, ready for its arguments (Enter then sends it). */
function pick(index: number): void {
  const item = menuItems[index];
  if (!item) {
    return;
  }
  input.value = `/${item.name} `;
  menuDismissed = undefined;
  closeMenu();
  input.focus();
  input.setSelectionRange(input.value.length, input.value.length);
}

function post(message: FromWebview): void {
  vscode.postMessage(message);
}

function submit(kind: 'send' | 'plan' = 'send'): void {
  const text = input.value.trim();
  if (!text) {
    return;
  }
  post({ type: kind, text, ...mentions.sendFields() });
  input.value = '';
  closeMenu();
}

input.addEventListener('input', () => {
  if (menuDismissed !== undefined && menuDismissed !== input.value) {
    menuDismissed = undefined;
  }
  updateMenu();
});

input.addEventListener('keydown', (event) => {
  if (!menu.hidden && !event.isComposing) {
    const count = menuItems.length;
    if ((event.key === 'ArrowDown' || event.key === 'ArrowUp') && count) {
      event.preventDefault();
      menuSelected = (menuSelected + (event.key === 'ArrowDown' ? 1 : count - 1)) % count;
      updateMenu();
      return;
    }
    if ((event.key === 'Enter' && !event.shiftKey) || event.key === 'Tab') {
      if (count) {
        event.preventDefault();
        pick(menuSelected);
        return;
      }
    }
    if (event.key === 'Escape') {
      event.preventDefault();
      event.stopPropagation();
      menuDismissed = input.value;
      closeMenu();
      return;
    }
  }
  if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    submit();
  }
});
// mousedown, not click: the input keeps the focus.
menu.addEventListener('mousedown', (event) => {
  const item = (event.target as Element).closest('.slash-item') as HTMLElement | null;
  if (item) {
    event.preventDefault();
    pick(Number(item.dataset.index));
  }
});
input.addEventListener('blur', () => closeMenu());
input.addEventListener('focus', () => updateMenu());
toggleCustomization.addEventListener('click', () => post({ type: 'toggleCustomization' }));
panel.addEventListener('click', (event) => {
  if ((event.target as Element).closest('button[data-action="refreshCustomization"]')) {
    post({ type: 'refreshCustomization' });
  }
});
send.addEventListener('click', () => submit());
plan.addEventListener('click', () => submit('plan'));
stop.addEventListener('click', () => post({ type: 'stop' }));
document.getElementById('new-session')?.addEventListener('click', () => post({ type: 'newSession' }));
document.getElementById('rename-session')?.addEventListener('click', () => post({ type: 'renameSession' }));
document.getElementById('delete-session')?.addEventListener('click', () => post({ type: 'deleteSession' }));
session.addEventListener('change', () => {
  if (session.value && session.value !== current?.sessionId) {
    post({ type: 'switchSession', sessionId: session.value });
  }
});

log.addEventListener('click', (event) => {
  const target = (event.target as Element).closest('button[data-action]') as HTMLButtonElement | null;
  if (!target) {
    return;
  }
  const id = target.dataset.id ?? '';
  switch (target.dataset.action) {
    case 'openDiff':
      post({ type: 'openDiff', proposalId: id });
      break;
    case 'accept':
      post({ type: 'accept', proposalId: id });
      break;
    case 'acceptHunk':
    case 'rejectHunk':
      post({ type: 'decideHunk', proposalId: id, hunk: Number(target.dataset.hunk), accept: target.dataset.action === 'acceptHunk' });
      break;
    case 'copyCode': {
      const code = target.closest('.code-block')?.querySelector('pre code')?.textContent ?? '';
      post({ type: 'copy', text: code });
      copied(target);
      break;
    }
    case 'reject':
      post({ type: 'reject', proposalId: id });
      break;
    case 'showProblems':
      post({ type: 'showProblems' });
      break;
    case 'approvePlan':
      post({ type: 'approvePlan', planId: target.dataset.plan ?? '' });
      break;
    case 'dropPlan':
      post({ type: 'dropPlan', planId: target.dataset.plan ?? '' });
      break;
    case 'scaffold':
      post({ type: 'scaffold', planId: target.dataset.plan ?? '', stepId: target.dataset.step ?? '' });
      break;
    case 'undoRun':
      post({ type: 'undoRun', runId: target.dataset.run ?? '' });
      break;
    case 'rewind':
      post({ type: 'rewind', key: target.dataset.key ?? '' });
      break;
    case 'undoRewind':
      post({ type: 'undoRewind', rewindId: target.dataset.rewind ?? '' });
      break;
  }
});

window.addEventListener('message', (event: MessageEvent<ToWebview>) => {
  const message = event.data;
  if (message && mentions.onMessage(message)) {
    return;
  }
  if (message?.type === 'state') {
    draw(message.state);
  } else if (message?.type === 'focusInput') {
    input.focus();
  }
});

post({ type: 'ready' });
