/**
 * Codicons, the editor's own icon font (bundled from @vscode/codicons into dist/codicons), so
 * the chat view's icons are the ones the workbench around it draws.
 */

/** An icon as markup: decorative, so screen readers read the text next to it instead. */
export function icon(name: string, extra = ''): string {
  return `<span class="codicon codicon-${name}${extra ? ` ${extra}` : ''}" aria-hidden="true"></span>`;
}

/** The icon of a status word (`ok`, `failed`, `running`, …) as the workbench shows such states. */
export function statusIcon(status: string): string {
  switch (status) {
    case 'running':
      return icon('loading', 'codicon-modifier-spin status-icon');
    case 'ok':
    case 'accepted':
    case 'partially_accepted':
    case 'completed':
      return icon('pass', 'status-icon ok');
    case 'failed':
    case 'stale':
      return icon('error', 'status-icon failed');
    case 'rejected':
    case 'denied':
    case 'cancelled':
      return icon('circle-slash', 'status-icon failed');
    case 'waiting':
    case 'pending':
      return icon('eye', 'status-icon waiting');
    default:
      return icon('circle-outline', 'status-icon');
  }
}

/** The icon of what a tool does, by the kind the server sent (never by the tool's name). */
export function kindIcon(kind: string | undefined): string {
  switch (kind) {
    case 'read':
      return icon('file');
    case 'change':
      return icon('edit');
    case 'run':
      return icon('terminal');
    case 'git':
      return icon('git-commit');
    default:
      return icon('tools');
  }
}
