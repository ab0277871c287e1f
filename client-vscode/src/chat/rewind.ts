/**
 * Rewind from the chat view: a turn's Rewind action asks what to take back (the code, the
 * conversation, or both) and `toolgate.rewind` goes back to before that turn; a rewind's own
 * action takes it back (`toolgate.undoRewind`). The server keeps both in the session, so the
 * view draws them by loading the session again.
 */
import * as api from '../vscodeapi';
import type { RewindResult } from '../protocol';

export type RewindWhat = RewindResult['what'];

/** The quick pick's choices, the default first. */
export const REWIND_CHOICES: readonly { label: string; detail: string; what: RewindWhat }[] = [
  {
    label: 'Code and conversation',
    detail: 'Put back the files this turn and the later ones changed, and take the turns out of the conversation',
    what: 'both',
  },
  {
    label: 'Code only',
    detail: 'Put back the files this turn and the later ones changed; the model still sees the turns',
    what: 'code',
  },
  {
    label: 'Conversation only',
    detail: 'Take this turn and the later ones out of what the model sees; the files stay as they are',
    what: 'conversation',
  },
];

/** Ask what to rewind to before turn `turn`; undefined when the person pressed Escape. */
export async function chooseRewind(turn: number, text: string): Promise<RewindWhat | undefined> {
  const words = text.length > 60 ? `${text.slice(0, 57)}…` : text;
  const picked = await api.showQuickPick(
    REWIND_CHOICES.map((choice) => ({ label: choice.label, detail: choice.detail, what: choice.what })),
    {
      title: `Rewind to before turn ${turn}: "${words}"`,
      placeHolder: 'What to take back',
    },
  );
  return picked?.what;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** What a rewind (or taking one back) did, in words for the conversation. */
export function rewindNote(done: RewindResult): string {
  const parts: string[] = [];
  const turns = done.turns ?? [];
  const span = turns.length > 1 ? `turns ${turns[0]}–${turns[turns.length - 1]}` : `turn ${turns[0]}`;
  if (done.takenBack) {
    parts.push(`Took back the rewind to turn ${done.toTurn}`);
    if (turns.length) {
      parts.push(`the model sees ${span} again`);
    }
    if (done.runs?.length) {
      parts.push(`the changes of ${plural(done.runs.length, 'run')} are back`);
    }
  } else {
    parts.push(`Rewound to turn ${done.toTurn}`);
    if (turns.length && done.what !== 'code') {
      parts.push(`the model no longer sees ${span}`);
    }
    if (done.what !== 'conversation') {
      parts.push(done.runs?.length ? `put back the files of ${plural(done.runs.length, 'run')}` : 'no file needed putting back');
    }
  }
  if (done.leftAlone?.length) {
    parts.push(`left alone, as you changed them since: ${done.leftAlone.join(', ')}`);
  }
  return `${parts.join('; ')}.`;
}
