/** One progress per run: the extension's own, never also the server's `$/progress`. */
import type { ClientCapabilities, StaticFeature } from 'vscode-languageclient/node';

/**
 * Tells the server this client shows no work-done progress: the extension draws one progress
 * of its own per run (or none while the chat view shows the run), so the server's `$/progress`
 * would be a second one.
 */
export const noServerProgress: StaticFeature = {
  fillClientCapabilities(capabilities: ClientCapabilities): void {
    capabilities.window = { ...capabilities.window, workDoneProgress: false };
  },
  initialize(): void {},
  getState: () => ({ kind: 'static' }),
  clear(): void {},
};
