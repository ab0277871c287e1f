/**
 * Runs named the way a person names them: "this run", "the run at 14:02", "an earlier run".
 * The ids stay in tooltips and the run log, where someone looking for one finds it.
 */

/** `14:02`, in the machine's own time zone. */
export function clockTime(at: number): string {
  const date = new Date(at);
  return `${String(date.getHours()).padStart(2, '0')}:${String(date.getMinutes()).padStart(2, '0')}`;
}

/**
 * A run in words: "the run at 14:02" when its start time is known (this window saw it start),
 * else "an earlier run" (a run read back from a stored transcript, which keeps no times).
 */
export function runName(at: number | undefined, what = 'run'): string {
  return at === undefined ? `an earlier ${what}` : `the ${what} at ${clockTime(at)}`;
}

/** `1.2 s`, `340 ms`, `2 min 5 s`: how long a tool call took. */
export function durationText(ms: number): string {
  if (ms < 1000) {
    return `${Math.max(0, Math.round(ms))} ms`;
  }
  const seconds = ms / 1000;
  if (seconds < 60) {
    return `${seconds < 10 ? seconds.toFixed(1) : Math.round(seconds)} s`;
  }
  const whole = Math.round(seconds);
  return `${Math.floor(whole / 60)} min ${whole % 60} s`;
}
