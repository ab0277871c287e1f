/**
 * The `@` mentions of a message, as the chat view offers them: the keywords the server reads
 * (`session/mentions.py`) and the workspace's files and folders. Shared by the extension and
 * the webview: no `vscode`, no DOM.
 */

/** What one entry of the `@` menu (or the picker) puts in the message. */
export interface MentionItem {
  /** The text inserted, with its `@` (`@selection`, `@src/calc.py`, `@"my notes.md"`). */
  text: string;
  kind: 'keyword' | 'file' | 'folder';
  /** What it attaches, in words. */
  description: string;
}

/** The server's keywords, in the order the menu offers them. */
export const KEYWORD_MENTIONS: readonly MentionItem[] = [
  { text: '@selection', kind: 'keyword', description: "The editor's selection, as you see it (unsaved text too)" },
  { text: '@problems', kind: 'keyword', description: 'The problems the editor shows (every language server’s)' },
  { text: '@diff', kind: 'keyword', description: "The working tree's uncommitted changes" },
  { text: '@diff:staged', kind: 'keyword', description: 'The staged changes' },
  { text: '@tests', kind: 'keyword', description: "The last test run's failures" },
];

/** The mention of a workspace-relative path: quoted when it holds a space, folders end in `/`. */
export function pathMention(path: string, folder = false): string {
  const target = folder && !path.endsWith('/') ? `${path}/` : path;
  return /\s|"/.test(target) ? `@"${target.replace(/"/g, '')}"` : `@${target}`;
}

/**
 * The `@` word being typed just before `caret`: where it starts and what follows the `@`;
 * undefined when the caret is not in one (an e-mail address is no mention: `@` opens a word).
 */
export function mentionAt(text: string, caret: number): { start: number; query: string } | undefined {
  const before = text.slice(0, caret);
  const match = /(^|\s)@("[^"\n]*|[^\s"]*)$/.exec(before);
  if (!match) {
    return undefined;
  }
  const start = before.length - match[2].length - 1;
  return { start, query: match[2].replace(/^"/, '') };
}

/** `text` with the mention at `start` (up to the caret) replaced by `mention` and a space. */
export function insertMention(
  text: string,
  start: number,
  caret: number,
  mention: string,
): { text: string; caret: number } {
  // A folder stays open for its files: no space after it, so the menu offers them next.
  const tail = mention.endsWith('/') ? '' : ' ';
  const head = text.slice(0, start) + mention + tail;
  // The rest of the word being typed is replaced too; a space already there is not doubled.
  let rest = text.slice(caret).replace(/^\S*/, '');
  if (tail && rest.startsWith(' ')) {
    rest = rest.slice(1);
  }
  return { text: head + rest, caret: head.length };
}

/** Every folder that holds one of `files` (workspace-relative, `/`-separated). */
export function foldersOf(files: string[]): string[] {
  const folders = new Set<string>();
  for (const file of files) {
    const parts = file.split('/');
    for (let i = 1; i < parts.length; i++) {
      folders.add(parts.slice(0, i).join('/'));
    }
  }
  return [...folders].sort();
}

/**
 * The menu for `query`: matching keywords, then folders and files whose path starts with it,
 * then those whose name holds it; at most `limit` in all.
 */
export function matchMentions(files: string[], query: string, limit = 50): MentionItem[] {
  const q = query.toLowerCase();
  const keywords = KEYWORD_MENTIONS.filter((k) => k.text.slice(1).startsWith(q));
  const paths: MentionItem[] = [
    ...foldersOf(files).map((f) => ({ text: pathMention(f, true), kind: 'folder' as const, description: 'folder' })),
    ...files.map((f) => ({ text: pathMention(f), kind: 'file' as const, description: 'file' })),
  ];
  const bare = (item: MentionItem) => item.text.replace(/^@"?/, '').replace(/"$/, '').toLowerCase();
  const starts = paths.filter((p) => bare(p).startsWith(q) && bare(p) !== q);
  // Inside a folder's listing only its own children: `src/` lists src's files, not all of them.
  const depth = (p: MentionItem) => bare(p).replace(/\/$/, '').split('/').length;
  const level = q.split('/').length;
  const near = starts.filter((p) => depth(p) === level);
  const deeper = starts.filter((p) => depth(p) !== level);
  const holds = paths.filter((p) => !bare(p).startsWith(q) && bare(p).includes(q));
  return [...keywords, ...near, ...(q ? [...deeper, ...holds] : [])].slice(0, limit);
}

/** The mentions a message holds, in order, each once (as the server finds them). */
export function mentionsIn(text: string): string[] {
  const found: string[] = [];
  for (const match of text.matchAll(/(?<!\S)@(?:"([^"\n]+)"|(\S+))/g)) {
    const target = (match[1] ?? match[2] ?? '').replace(/[.,;:!?)\]}'"]+$/, '');
    const mention = match[1] ? `@"${target}"` : `@${target}`;
    if (target && !found.includes(mention)) {
      found.push(mention);
    }
  }
  return found;
}

/** Whether a message names a keyword (`problems`, `selection`, …). */
export function mentionsKeyword(text: string, keyword: string): boolean {
  return mentionsIn(text).includes(`@${keyword}`);
}
