/** What the status bar says: whether a run is active and how many proposals wait. */

export type RunState = 'starting' | 'idle' | 'running' | 'error' | 'stopped';

/** Status bar text, with codicons. */
export function statusText(state: RunState, pending: number): string {
  const icon: Record<RunState, string> = {
    starting: '$(loading~spin)',
    idle: '$(sparkle)',
    running: '$(sync~spin)',
    error: '$(error)',
    stopped: '$(circle-slash)',
  };
  const words: Record<RunState, string> = {
    starting: 'starting',
    idle: 'idle',
    running: 'running',
    error: 'error',
    stopped: 'stopped',
  };
  const waiting = pending > 0 ? ` · ${pending} pending` : '';
  return `${icon[state]} Toolgate: ${words[state]}${waiting}`;
}

/** Status bar tooltip. */
export function statusTooltip(state: RunState, pending: number): string {
  const run = state === 'running' ? 'The agent is working.' : `Server ${state}.`;
  const proposals =
    pending === 1 ? '1 proposal waits for review.' : `${pending} proposals wait for review.`;
  return `${run} ${proposals} Click to see pending proposals.`;
}
