/**
 * What the person points at from the chat view: the current file and selection (offered as a
 * chip with the next message), the `@` menu's workspace files, and the context `toolgate.ask`
 * carries for `@selection` and `@problems` (the server reads the rest of the mentions itself).
 */
import * as api from '../vscodeapi';
import type { AskContext, ContextDiagnostic } from '../protocol';
import { KEYWORD_MENTIONS, foldersOf, matchMentions, mentionsKeyword, pathMention, type MentionItem } from './mentions';
import type { PointingChip } from './messages';

/** How many files the `@` menu lists from (a larger workspace is typed further into). */
const MAX_FILES = 5_000;
/** How long the file list is kept: a menu typed letter by letter asks once. */
const FILES_TTL_MS = 5_000;
/** More problems than this are not sent: the server cuts them to fit anyway. */
const MAX_PROBLEMS = 200;

type Selection = NonNullable<ReturnType<typeof api.activeSelection>>;

/** A file's workspace-relative path; undefined outside the workspace (the server refuses it). */
function inWorkspace(uri: string): string | undefined {
  const path = api.asRelativePath(uri);
  return /^([a-zA-Z]:)?[\\/]/.test(path) ? undefined : path;
}

/** The chip for the active editor's file and selection; undefined when no workspace file is active. */
export function pointingChip(selection: Selection | undefined = api.activeSelection()): PointingChip | undefined {
  const path = selection && inWorkspace(selection.uri);
  if (!selection || path === undefined) {
    return undefined;
  }
  if (selection.empty) {
    return { uri: selection.uri, label: path, selection: false };
  }
  const { start, end } = selection.range;
  // A selection that ends at the start of a line does not take that line, as the server counts.
  const last = end.character === 0 && end.line > start.line ? end.line - 1 : end.line;
  const lines = start.line === last ? `${start.line + 1}` : `${start.line + 1}-${last + 1}`;
  return { uri: selection.uri, label: `${path}:${lines}`, selection: true };
}

/** The editor's problems as `toolgate.ask` takes them: errors first, at most MAX_PROBLEMS. */
export function editorProblems(): ContextDiagnostic[] {
  const found: ContextDiagnostic[] = [];
  for (const [uri, diagnostics] of api.allDiagnostics()) {
    if (!uri.startsWith('file:')) {
      continue; // output panes, untitled buffers: nothing the model could open
    }
    for (const d of diagnostics) {
      found.push({
        uri,
        range: {
          start: { line: d.range.start.line, character: d.range.start.character },
          end: { line: d.range.end.line, character: d.range.end.character },
        },
        message: d.message,
        // VS Code counts severities from 0 (Error); LSP from 1.
        severity: d.severity + 1,
        ...(d.source ? { source: d.source } : {}),
      });
    }
  }
  return found.sort((a, b) => (a.severity ?? 1) - (b.severity ?? 1)).slice(0, MAX_PROBLEMS);
}

/**
 * The context sent with `text`: the file and selection when the chip was kept (or the text
 * names `@selection`), and the editor's problems when it names `@problems`.
 */
export function askContext(text: string, withPointing: boolean): AskContext | undefined {
  const context: AskContext = {};
  const selection = api.activeSelection();
  // A file outside the workspace goes only when named: the server then says it refuses it.
  const offered = withPointing && selection !== undefined && inWorkspace(selection.uri) !== undefined;
  if (selection && (offered || mentionsKeyword(text, 'selection'))) {
    context.uri = selection.uri;
    if (!selection.empty) {
      context.range = selection.range;
      context.text = selection.text;
    }
  }
  if (mentionsKeyword(text, 'problems')) {
    context.diagnostics = editorProblems();
  }
  return Object.keys(context).length ? context : undefined;
}

let files: { at: number; paths: Promise<string[]> } | undefined;

/** The workspace's files, workspace-relative, read at most every few seconds. */
function workspacePaths(): Promise<string[]> {
  const now = Date.now();
  if (!files || now - files.at > FILES_TTL_MS) {
    const paths = api.findFiles(MAX_FILES).then((uris) => uris.map((uri) => api.asRelativePath(uri)).sort());
    files = { at: now, paths };
    paths.catch(() => (files = undefined));
  }
  return files.paths;
}

/** Forget the file list (tests; a workspace that changed under the menu). */
export function forgetFiles(): void {
  files = undefined;
}

/** The `@` menu's entries for what follows the `@`: keywords, folders, files. */
export async function mentionItems(query: string): Promise<MentionItem[]> {
  let paths: string[] = [];
  try {
    paths = await workspacePaths();
  } catch {
    // No workspace to list: the keywords still work.
  }
  return matchMentions(paths, query);
}

/** The picker (a quick pick over every mention); the chosen mention's text, or undefined. */
export async function pickMention(): Promise<string | undefined> {
  const all = [...KEYWORD_MENTIONS, ...(await allPaths())];
  const picked = await api.showQuickPick(
    all.map((item) => ({ label: item.text, description: item.description, item })),
    { title: 'Attach context to the message', placeHolder: 'A file, a folder, the selection, the problems, the diff, the tests', matchOnDescription: true },
  );
  return picked?.item.text;
}

async function allPaths(): Promise<MentionItem[]> {
  let paths: string[] = [];
  try {
    paths = await workspacePaths();
  } catch {
    return [];
  }
  return [
    ...foldersOf(paths).map((f) => ({ text: pathMention(f, true), kind: 'folder' as const, description: 'folder' })),
    ...paths.map((f) => ({ text: pathMention(f), kind: 'file' as const, description: 'file' })),
  ];
}
