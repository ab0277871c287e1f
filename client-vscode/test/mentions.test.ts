import { beforeEach, describe, expect, it, vi } from 'vitest';

vi.mock('../src/vscodeapi', () => import('./fakeapi'));

import { fake } from './fakeapi';
import {
  KEYWORD_MENTIONS,
  foldersOf,
  insertMention,
  matchMentions,
  mentionAt,
  mentionsIn,
  pathMention,
} from '../src/chat/mentions';
import { askContext, forgetFiles, mentionItems, pickMention, pointingChip } from '../src/chat/pointing';
import { renderAttached, renderChip, renderMentionMenu } from '../src/webview/mentions';
import { chatHtml } from '../src/chat/chatView';
import { isFromWebview } from '../src/chat/messages';

const FILES = ['README.md', 'src/calc.py', 'src/util/strings.py', 'tests/test_calc.py', 'my notes.md'];

describe('the @ word being typed', () => {
  it('is found at the caret, after a space or at the start, never inside a word', () => {
    expect(mentionAt('fix @sr', 7)).toEqual({ start: 4, query: 'sr' });
    expect(mentionAt('@', 1)).toEqual({ start: 0, query: '' });
    expect(mentionAt('mail me@host', 12)).toBeUndefined();
    expect(mentionAt('fix @src/calc.py now', 20)).toBeUndefined();
    expect(mentionAt('see @"my no', 11)).toEqual({ start: 4, query: 'my no' });
  });

  it('is replaced by the chosen mention and a space; a folder stays open for its files', () => {
    expect(insertMention('fix @ca now', 4, 7, '@src/calc.py')).toEqual({ text: 'fix @src/calc.py now', caret: 17 });
    expect(insertMention('fix @sr', 4, 7, '@src/')).toEqual({ text: 'fix @src/', caret: 9 });
    // The rest of the word under the caret goes too.
    expect(insertMention('@selXX and', 0, 4, '@selection')).toEqual({ text: '@selection and', caret: 11 });
  });
});

describe('the @ menu', () => {
  it('offers the keywords first, then the top level of the workspace', () => {
    const items = matchMentions(FILES, '');
    expect(items.slice(0, 5).map((i) => i.text)).toEqual(KEYWORD_MENTIONS.map((k) => k.text));
    expect(items.slice(5).map((i) => i.text)).toEqual(['@src/', '@tests/', '@README.md', '@"my notes.md"']);
  });

  it('lists a folder\'s own children when its path is typed, then deeper and partial matches', () => {
    expect(matchMentions(FILES, 'src/').map((i) => i.text)).toEqual(['@src/util/', '@src/calc.py', '@src/util/strings.py']);
    expect(matchMentions(FILES, 'calc').map((i) => i.text)).toEqual(['@src/calc.py', '@tests/test_calc.py']);
    expect(matchMentions(FILES, 'di').map((i) => i.text)).toEqual(['@diff', '@diff:staged']);
  });

  it('quotes a path with a space and ends folders with /', () => {
    expect(pathMention('my notes.md')).toBe('@"my notes.md"');
    expect(pathMention('src', true)).toBe('@src/');
    expect(foldersOf(FILES)).toEqual(['src', 'src/util', 'tests']);
  });

  it('finds the mentions of a sent message as the server does', () => {
    expect(mentionsIn('look at @src/calc.py, @problems and @"my notes.md". mail a@b')).toEqual([
      '@src/calc.py',
      '@problems',
      '@"my notes.md"',
    ]);
  });

  it('draws its items escaped, the selected one marked', () => {
    const html = renderMentionMenu([{ text: '@<b>.py', kind: 'file', description: 'file' }], 0);
    expect(html).toContain('&lt;b&gt;');
    expect(html).toContain('aria-selected="true"');
    expect(renderMentionMenu([], 0)).toContain('Nothing in the workspace matches');
  });

  it('names each kind by the codicon the workbench pickers use', () => {
    const html = renderMentionMenu(
      [
        { text: '@selection', kind: 'keyword', description: '' },
        { text: '@src/', kind: 'folder', description: '' },
        { text: '@calc.py', kind: 'file', description: '' },
      ],
      0,
    );
    expect(html.match(/codicon-(symbol-keyword|folder|file)\b/g)).toEqual(['codicon-symbol-keyword', 'codicon-folder', 'codicon-file']);
  });
});

describe('what the host gives the chat', () => {
  beforeEach(() => {
    fake.reset();
    forgetFiles();
  });

  it('lists workspace files for the menu and the picker', async () => {
    fake.files = FILES.map((f) => `file:///work/${f}`);
    expect((await mentionItems('tests')).map((i) => i.text)).toEqual(['@tests', '@tests/', '@tests/test_calc.py']);
    fake.quickPickAnswer = (items) => (items as { label: string }[]).find((i) => i.label === '@src/util/');
    expect(await pickMention()).toBe('@src/util/');
    const offered = (fake.quickPicks[0].items as { label: string }[]).map((i) => i.label);
    expect(offered).toContain('@diff:staged');
    expect(offered).toContain('@src/util/strings.py');
  });

  it('makes the chip from the active editor: the file, or its selected lines', () => {
    expect(pointingChip()).toBeUndefined();
    fake.selection = {
      uri: 'file:///work/calc.py',
      text: 'a\nb\n',
      range: { start: { line: 1, character: 0 }, end: { line: 3, character: 0 } },
      empty: false,
    };
    expect(pointingChip()).toEqual({ uri: 'file:///work/calc.py', label: 'calc.py:2-3', selection: true });
    fake.selection = { ...fake.selection, empty: true };
    expect(pointingChip()).toEqual({ uri: 'file:///work/calc.py', label: 'calc.py', selection: false });
    // A file outside the workspace is no chip, and goes along only when named.
    fake.selection = { ...fake.selection, uri: 'file:///etc/hosts' };
    expect(pointingChip()).toBeUndefined();
    expect(askContext('look', true)).toBeUndefined();
    expect(askContext('look at @selection', true)).toEqual({ uri: 'file:///etc/hosts' });
  });

  it('sends the selection unless its chip was removed, and always for @selection', () => {
    fake.selection = {
      uri: 'file:///work/calc.py',
      text: 'return a - b',
      range: { start: { line: 1, character: 4 }, end: { line: 1, character: 16 } },
      empty: false,
    };
    expect(askContext('fix it', true)).toEqual({ uri: 'file:///work/calc.py', range: fake.selection.range, text: 'return a - b' });
    expect(askContext('fix it', false)).toBeUndefined();
    expect(askContext('fix @selection', false)).toMatchObject({ text: 'return a - b' });
  });

  it('sends the editor\'s problems for @problems, errors first, as LSP counts severities', () => {
    const range = { start: { line: 4, character: 0 }, end: { line: 4, character: 3 } };
    fake.diagnostics.set('file:///work/a.py', [{ range, message: 'unused', severity: 1, source: 'ruff' }]);
    fake.diagnostics.set('file:///work/b.ts', [{ range, message: "Type 'string' is not assignable", severity: 0, source: 'ts' }]);
    fake.diagnostics.set('output:log', [{ range, message: 'not a file', severity: 0 }]);
    expect(askContext('what about these?', false)).toBeUndefined();
    expect(askContext('fix @problems', false)).toEqual({
      diagnostics: [
        { uri: 'file:///work/b.ts', range, message: "Type 'string' is not assignable", severity: 1, source: 'ts' },
        { uri: 'file:///work/a.py', range, message: 'unused', severity: 2, source: 'ruff' },
      ],
    });
  });
});

describe('the chip and the turn\'s attachments', () => {
  it('draws the chip with a remove button, nothing without a file', () => {
    const html = renderChip({ uri: 'file:///work/calc.py', label: 'calc.py:2-3', selection: true });
    expect(html).toContain('calc.py:2-3');
    expect(html).toContain('data-action="removePointing"');
    expect(html).toContain('the selected lines');
    expect(html).toContain('codicon-selection');
    expect(html).toMatch(/data-action="removePointing"[^>]*><span class="codicon codicon-close"/);
    expect(renderChip(undefined)).toBe('');
  });

  it('shows what a turn attached, what was cut and what was refused', () => {
    const html = renderAttached({
      kind: 'user',
      key: 'u',
      text: 'x',
      pointed: 'calc.py',
      attached: [
        { mention: '@src/calc.py', label: 'src/calc.py, 12 lines' },
        { mention: '@diff', label: 'the working tree', cut: '100 of 900 bytes kept' },
      ],
      notAttached: ['@../etc/passwd: outside the workspace'],
    });
    expect(html).toContain('</span>calc.py</span>');
    expect(html).toContain('codicon-file" aria-hidden="true"></span>@src/calc.py');
    expect(html).toContain('codicon-symbol-keyword" aria-hidden="true"></span>@diff');
    expect(html).toContain('cut to fit: 100 of 900 bytes kept');
    expect(html).toContain('class="chip refused"');
    expect(renderAttached({ kind: 'user', key: 'u', text: 'x' })).toBe('');
  });

  it('has the menu, the chip and the picker button on the page', () => {
    const html = chatHtml('csp', 'script.js', 'style.css', 'n');
    for (const id of ['mention-menu', 'pointing', 'mention-pick']) {
      expect(html).toContain(`id="${id}"`);
    }
  });

  it('accepts the mention and rewind messages, and refuses malformed ones', () => {
    expect(isFromWebview({ type: 'mentionQuery', query: 'src' })).toBe(true);
    expect(isFromWebview({ type: 'mentionQuery' })).toBe(false);
    expect(isFromWebview({ type: 'pickMention' })).toBe(true);
    expect(isFromWebview({ type: 'send', text: 'x', withPointing: false })).toBe(true);
    expect(isFromWebview({ type: 'send', text: 'x', withPointing: 'no' })).toBe(false);
    expect(isFromWebview({ type: 'rewind', key: 'user-1' })).toBe(true);
    expect(isFromWebview({ type: 'rewind', turn: 1 })).toBe(false);
    expect(isFromWebview({ type: 'undoRewind', rewindId: 'w-1' })).toBe(true);
  });
});
