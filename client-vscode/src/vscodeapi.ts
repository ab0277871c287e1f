/**
 * The one module that touches the `vscode` API at run time. Everything else calls these thin
 * wrappers, so unit tests can replace this module alone.
 */
import * as vscode from 'vscode';
import { interpreterFromPythonApi, type PythonExtensionApi } from './python';

export type {
  CancellationToken,
  CodeLens,
  Disposable,
  Event,
  LogOutputChannel,
  ExtensionContext,
  OutputChannel,
  Progress,
  QuickPickItem,
  SecretStorage,
  StatusBarItem,
  TextDocument,
  TextDocumentContentProvider,
  CodeLensProvider,
  Uri,
  Webview,
  WebviewView,
  WebviewViewProvider,
  Memento,
} from 'vscode';

// ---- window
export function showInformationMessage(message: string, ...items: string[]): Thenable<string | undefined> {
  return vscode.window.showInformationMessage(message, ...items);
}
export function showWarningMessage(message: string, ...items: string[]): Thenable<string | undefined> {
  return vscode.window.showWarningMessage(message, ...items);
}
export function showErrorMessage(message: string, ...items: string[]): Thenable<string | undefined> {
  return vscode.window.showErrorMessage(message, ...items);
}
export function showInputBox(options: vscode.InputBoxOptions): Thenable<string | undefined> {
  return vscode.window.showInputBox(options);
}
export function showQuickPick<T extends vscode.QuickPickItem>(
  items: T[],
  options: vscode.QuickPickOptions,
): Thenable<T | undefined> {
  return vscode.window.showQuickPick(items, options);
}
export function createOutputChannel(name: string): vscode.OutputChannel {
  return vscode.window.createOutputChannel(name);
}
export function createLogOutputChannel(name: string): vscode.LogOutputChannel {
  return vscode.window.createOutputChannel(name, { log: true });
}
export function createStatusBarItem(priority: number): vscode.StatusBarItem {
  return vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, priority);
}
export function setStatusBarMessage(text: string, timeoutMs: number): vscode.Disposable {
  return vscode.window.setStatusBarMessage(text, timeoutMs);
}
/** A cancellable progress notification. */
export function withNotificationProgress<R>(
  title: string,
  task: (progress: vscode.Progress<{ message?: string }>, token: vscode.CancellationToken) => Thenable<R>,
): Thenable<R> {
  return vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title, cancellable: true },
    task,
  );
}
/** Progress in a notification that cannot be cancelled (e.g. waiting for the server). */
export function withQuietProgress<R>(title: string, task: () => Thenable<R>): Thenable<R> {
  return vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title }, task);
}
/** A modal warning: the answer is one of `items`, or undefined when dismissed. */
export function showModalWarning(message: string, detail: string, ...items: string[]): Thenable<string | undefined> {
  return vscode.window.showWarningMessage(message, { modal: true, detail }, ...items);
}
/** Register the provider of a webview view declared in package.json. */
export function registerWebviewViewProvider(id: string, provider: vscode.WebviewViewProvider): vscode.Disposable {
  return vscode.window.registerWebviewViewProvider(id, provider, { webviewOptions: { retainContextWhenHidden: true } });
}
/** The uri of a file inside the extension. */
export function extensionFile(base: vscode.Uri, ...parts: string[]): vscode.Uri {
  return vscode.Uri.joinPath(base, ...parts);
}
/** The active editor's document uri and selection, when it shows a file. */
export function activeSelection():
  | { uri: string; text: string; range: { start: { line: number; character: number }; end: { line: number; character: number } }; empty: boolean }
  | undefined {
  const editor = vscode.window.activeTextEditor;
  if (!editor || editor.document.uri.scheme !== 'file') {
    return undefined;
  }
  const { selection, document } = editor;
  return {
    uri: document.uri.toString(),
    text: document.getText(selection),
    range: {
      start: { line: selection.start.line, character: selection.start.character },
      end: { line: selection.end.line, character: selection.end.character },
    },
    empty: selection.isEmpty,
  };
}

// ---- tabs (the diff views)
/** One open tab that shows a diff, with the uris of both sides. */
export interface DiffTab {
  original: vscode.Uri;
  modified: vscode.Uri;
  isActive: boolean;
  /** Active in its group: visible on screen. */
  isVisible: boolean;
  tab: vscode.Tab;
}
export function diffTabs(): DiffTab[] {
  const out: DiffTab[] = [];
  for (const group of vscode.window.tabGroups.all) {
    for (const tab of group.tabs) {
      if (tab.input instanceof vscode.TabInputTextDiff) {
        out.push({
          original: tab.input.original,
          modified: tab.input.modified,
          isActive: group.isActive && tab.isActive,
          isVisible: tab.isActive,
          tab,
        });
      }
    }
  }
  return out;
}
export function closeTabs(tabs: vscode.Tab[]): Thenable<boolean> {
  return vscode.window.tabGroups.close(tabs, true);
}
export function onDidChangeTabs(listener: () => void): vscode.Disposable {
  const a = vscode.window.tabGroups.onDidChangeTabs(listener);
  const b = vscode.window.tabGroups.onDidChangeTabGroups(listener);
  const c = vscode.window.onDidChangeActiveTextEditor(listener);
  return vscode.Disposable.from(a, b, c);
}

// ---- commands
export function registerCommand(id: string, handler: (...args: unknown[]) => unknown): vscode.Disposable {
  return vscode.commands.registerCommand(id, handler);
}
export function executeCommand<T = unknown>(id: string, ...args: unknown[]): Thenable<T> {
  return vscode.commands.executeCommand<T>(id, ...args);
}
export function setContext(key: string, value: unknown): Thenable<unknown> {
  return vscode.commands.executeCommand('setContext', key, value);
}

// ---- workspace
export function getSetting(key: string): unknown {
  return vscode.workspace.getConfiguration('toolgate').get(key);
}
/** True when the person set `toolgate.<key>` themselves (user, workspace or folder), not a default. */
export function isSettingSet(key: string): boolean {
  const found = vscode.workspace.getConfiguration('toolgate').inspect(key);
  return (
    found !== undefined &&
    (found.globalValue !== undefined ||
      found.workspaceValue !== undefined ||
      found.workspaceFolderValue !== undefined)
  );
}
/** Set `toolgate.<key>` in the person's own (user) settings; undefined removes it. */
export function updateSetting(key: string, value: unknown): Thenable<void> {
  return vscode.workspace.getConfiguration('toolgate').update(key, value, vscode.ConfigurationTarget.Global);
}
export function onDidChangeConfiguration(
  listener: (affects: (section: string) => boolean) => void,
): vscode.Disposable {
  return vscode.workspace.onDidChangeConfiguration((event) =>
    listener((section) => event.affectsConfiguration(section)),
  );
}
export function isTrusted(): boolean {
  return vscode.workspace.isTrusted;
}
export function onDidGrantWorkspaceTrust(listener: () => void): vscode.Disposable {
  return vscode.workspace.onDidGrantWorkspaceTrust(listener);
}
export function workspaceFolderPath(): string | undefined {
  return vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
}
export function asRelativePath(uri: string): string {
  return vscode.workspace.asRelativePath(vscode.Uri.parse(uri), false);
}
/** The file URI of a path, relative to the first workspace folder unless absolute. */
export function workspaceFileUri(path: string): string | undefined {
  if (path.startsWith('/')) {
    return vscode.Uri.file(path).toString();
  }
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
  return folder ? vscode.Uri.joinPath(folder, path).toString() : undefined;
}
/** Open a file in an editor without taking the focus from where the person is. */
export async function showDocument(uri: string): Promise<void> {
  await vscode.window.showTextDocument(vscode.Uri.parse(uri), { preview: true, preserveFocus: true });
}
export function parseUri(uri: string): vscode.Uri {
  return vscode.Uri.parse(uri);
}
export function makeUri(scheme: string, path: string, query: string): vscode.Uri {
  return vscode.Uri.from({ scheme, path, query });
}
/** Save an open document when it has unsaved changes; true when it is clean on disk afterwards. */
export async function saveDocument(uri: string): Promise<boolean> {
  const target = vscode.Uri.parse(uri).toString();
  let document = vscode.workspace.textDocuments.find((doc) => doc.uri.toString() === target);
  if (!document) {
    try {
      document = await vscode.workspace.openTextDocument(vscode.Uri.parse(uri));
    } catch {
      return false;
    }
  }
  if (!document.isDirty) {
    return true;
  }
  return document.save();
}
export function registerTextDocumentContentProvider(
  scheme: string,
  provider: vscode.TextDocumentContentProvider,
): vscode.Disposable {
  return vscode.workspace.registerTextDocumentContentProvider(scheme, provider);
}

// ---- languages
export function registerCodeLensProvider(
  selector: vscode.DocumentSelector,
  provider: vscode.CodeLensProvider,
): vscode.Disposable {
  return vscode.languages.registerCodeLensProvider(selector, provider);
}
export function makeCodeLens(line: number, title: string, command: string, args: unknown[]): vscode.CodeLens {
  const range = new vscode.Range(line, 0, line, 0);
  return new vscode.CodeLens(range, { title, command, arguments: args });
}
/** Every problem the editor shows now, by file (every language server's, Toolgate's too). */
export function allDiagnostics(): [string, vscode.Diagnostic[]][] {
  return vscode.languages.getDiagnostics().map(([uri, found]) => [uri.toString(), found]);
}
/** The workspace's files (the editor's own excludes and .gitignore'd folders left out), as uris. */
export async function findFiles(max: number): Promise<string[]> {
  const found = await vscode.workspace.findFiles('**/*', '{**/node_modules/**,**/.git/**,**/.toolgate/**,**/__pycache__/**,**/.venv/**}', max);
  return found.map((uri) => uri.toString());
}
export function onDidChangeActiveEditor(listener: () => void): vscode.Disposable {
  return vscode.Disposable.from(
    vscode.window.onDidChangeActiveTextEditor(() => listener()),
    vscode.window.onDidChangeTextEditorSelection(() => listener()),
  );
}
export function getDiagnostics(uri: string): vscode.Diagnostic[] {
  return vscode.languages.getDiagnostics(vscode.Uri.parse(uri));
}
export function onDidChangeDiagnostics(listener: (uris: string[]) => void): vscode.Disposable {
  return vscode.languages.onDidChangeDiagnostics((event) =>
    listener(event.uris.map((uri) => uri.toString())),
  );
}

// ---- events and disposables
export function newEventEmitter<T>(): vscode.EventEmitter<T> {
  return new vscode.EventEmitter<T>();
}
export function disposableFrom(...items: { dispose(): unknown }[]): vscode.Disposable {
  return vscode.Disposable.from(...items);
}

// ---- extensions and env
/** The Python extension's selected interpreter for the workspace, if that extension is installed. */
export async function pythonExtensionInterpreter(): Promise<string | undefined> {
  const extension = vscode.extensions.getExtension('ms-python.python');
  if (!extension) {
    return undefined;
  }
  const api = (extension.isActive ? extension.exports : await extension.activate()) as PythonExtensionApi | undefined;
  return interpreterFromPythonApi(api, vscode.workspace.workspaceFolders?.[0]?.uri);
}
export function writeClipboard(text: string): Thenable<void> {
  return vscode.env.clipboard.writeText(text);
}
