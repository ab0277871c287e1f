/**
 * The problems a change caused, on its card: what the editor's other language servers report in
 * the file after it landed that they did not before it (the model reads the same list).
 */
import type { ChangeProblem } from '../protocol';
import { escapeHtml } from './html';

const SHOWN = 10;

/** `file:line source message`, as the model reads it. */
export function problemWords(problem: ChangeProblem): string {
  const source = problem.source ? ` ${problem.source}` : '';
  return `${problem.path}:${problem.line}${source} ${problem.message.split(/\s+/).join(' ').trim()}`;
}

/** The card's list of the change's new problems; nothing when it caused none. */
export function problemsBlock(problems: readonly ChangeProblem[] | undefined): string {
  if (!problems?.length) {
    return '';
  }
  const items = problems
    .slice(0, SHOWN)
    .map((p) => `<li class="problem severity-${escapeHtml(p.severity || 'error')}">${escapeHtml(problemWords(p))}</li>`)
    .join('');
  const more = problems.length > SHOWN ? `<li>… and ${problems.length - SHOWN} more</li>` : '';
  return (
    `<div class="change-problems" role="note"><div class="change-problems-title">New problems after this change</div>` +
    `<ul>${items}${more}</ul></div>`
  );
}
