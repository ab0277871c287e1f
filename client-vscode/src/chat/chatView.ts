/** The chat view in the activity bar: a webview view whose page is dist/webview.js and media/chat.css. */
import * as api from '../vscodeapi';
import type { ChatController } from './chatController';
import { isFromWebview } from './messages';

/** Id of the view in package.json. */
export const CHAT_VIEW_ID = 'toolgate.chat';

/** A random nonce for the page's Content-Security-Policy. */
export function makeNonce(): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  let out = '';
  for (let i = 0; i < 32; i++) {
    out += alphabet.charAt(Math.floor(Math.random() * alphabet.length));
  }
  return out;
}

/**
 * The page: a strict policy (no inline script, no remote content; only our own script with its
 * nonce and our stylesheet), the conversation, the input and the session bar.
 */
export function chatHtml(cspSource: string, scriptUri: string, styleUri: string, nonce: string, iconsUri = ''): string {
  const csp = [
    "default-src 'none'",
    `style-src ${cspSource}`,
    `img-src ${cspSource} data:`,
    `font-src ${cspSource}`,
    `script-src 'nonce-${nonce}'`,
  ].join('; ');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
${iconsUri ? `<link rel="stylesheet" href="${iconsUri}">\n` : ''}<link rel="stylesheet" href="${styleUri}">
<title>Toolgate</title>
</head>
<body>
<header class="sessions" role="toolbar" aria-label="Conversation">
  <select id="session" aria-label="Conversation"></select>
  <button id="new-session" class="icon-button" title="Start a new conversation" aria-label="New"><span class="codicon codicon-add" aria-hidden="true"></span></button>
  <button id="rename-session" class="icon-button" title="Rename this conversation" aria-label="Rename"><span class="codicon codicon-edit" aria-hidden="true"></span></button>
  <button id="delete-session" class="icon-button" title="Delete this conversation" aria-label="Delete"><span class="codicon codicon-trash" aria-hidden="true"></span></button>
  <button id="toggle-customization" class="icon-button" aria-expanded="false" aria-controls="customization" title="What customizes the agent here: rules, skills, commands, hooks, MCP servers" aria-label="Customization"><span class="codicon codicon-settings-gear" aria-hidden="true"></span></button>
</header>
<section id="customization" class="customization" aria-label="Customization" hidden></section>
<main id="log" role="log" aria-live="polite" aria-label="Conversation with the agent"></main>
<footer>
  <div id="status" class="status" role="status"></div>
  <div id="error" class="error" role="alert" hidden></div>
  <div id="slash-menu" class="slash-menu" role="listbox" aria-label="Commands" hidden></div>
  <div id="mention-menu" class="mention-menu" role="listbox" aria-label="Context to attach" hidden></div>
  <div id="pointing" class="pointing" aria-label="Sent with the message" hidden></div>
  <textarea id="input" rows="3" aria-label="Message to the agent" aria-autocomplete="list" aria-controls="slash-menu" aria-expanded="false" placeholder="Ask the agent… (Enter sends, Shift+Enter for a new line; / for commands; @ for files, @selection, @problems, @diff, @tests)"></textarea>
  <div class="actions">
    <button id="mention-pick" class="secondary" title="Attach context: a file, a folder, the selection, the problems, the diff, the tests" aria-label="Attach context"><span class="codicon codicon-mention" aria-hidden="true"></span></button>
    <button id="stop" class="secondary" hidden><span class="codicon codicon-debug-stop" aria-hidden="true"></span>Stop</button>
    <button id="plan" class="secondary" title="Ask for a plan of capability steps first: nothing runs until you approve it"><span class="codicon codicon-checklist" aria-hidden="true"></span>Plan</button>
    <button id="send"><span class="codicon codicon-send" aria-hidden="true"></span>Send</button>
  </div>
</footer>
<script nonce="${nonce}" src="${scriptUri}"></script>
</body>
</html>`;
}

/** Serves the chat view; the controller holds its state, so a hidden and shown view loses nothing. */
export class ChatViewProvider implements api.WebviewViewProvider {
  private view: api.WebviewView | undefined;

  constructor(
    private readonly extensionUri: api.Uri,
    private readonly chat: ChatController,
    /** Called each time the view is drawn (opened): the extension checks the model then. */
    private readonly onOpen: () => void = () => undefined,
  ) {}

  /** Whether the view is on screen. */
  visible(): boolean {
    return this.view?.visible === true;
  }

  resolveWebviewView(view: api.WebviewView): void {
    this.view = view;
    const webview = view.webview;
    webview.options = {
      enableScripts: true,
      localResourceRoots: [api.extensionFile(this.extensionUri, 'dist'), api.extensionFile(this.extensionUri, 'media')],
    };
    const script = webview.asWebviewUri(api.extensionFile(this.extensionUri, 'dist', 'webview.js')).toString();
    const style = webview.asWebviewUri(api.extensionFile(this.extensionUri, 'media', 'chat.css')).toString();
    // The editor's icon font, copied from @vscode/codicons into dist/ by the build.
    const icons = webview.asWebviewUri(api.extensionFile(this.extensionUri, 'dist', 'codicons', 'codicon.css')).toString();
    webview.html = chatHtml(webview.cspSource, script, style, makeNonce(), icons);
    const subscription = webview.onDidReceiveMessage((message: unknown) => {
      if (isFromWebview(message)) {
        void this.chat.handle(message);
      }
    });
    this.chat.attach((message) => void webview.postMessage(message));
    view.onDidDispose(() => {
      subscription.dispose();
      this.chat.detach();
      this.view = undefined;
    });
    this.onOpen();
  }

  /** Reveal the view and put the cursor in its input. */
  focus(): void {
    this.view?.show(false);
    void this.view?.webview.postMessage({ type: 'focusInput' });
  }
}
