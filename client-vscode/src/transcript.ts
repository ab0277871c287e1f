/**
 * Turns toolgate/event notifications into the "Toolgate" output channel: a transcript a person
 * reads (what was asked, the answer, each call and how it ended) at the info level, and the
 * protocol itself (each event as the server sent it, ids, streamed deltas) at the debug level,
 * shown only when the person sets the channel's log level to Debug.
 */
import type { AgentEvent } from './protocol';

const MAX_ARGUMENT_CHARS = 400;
const MAX_EVENT_CHARS = 2000;

/** A log output channel's writers, as much of them as the transcript uses. */
export interface TranscriptOutput {
  info(text: string): void;
  warn(text: string): void;
  debug(text: string): void;
  show(preserveFocus?: boolean): void;
}

/** One line for the channel, with the level it is written at. */
export interface TranscriptLine {
  level: 'info' | 'warn' | 'debug';
  text: string;
}

/** Replace every occurrence of each secret with a mask, so a key never reaches the transcript. */
export function redact(text: string, secrets: readonly (string | undefined)[]): string {
  let out = text;
  for (const secret of secrets) {
    // Very short strings would mask ordinary words; a real key is long.
    if (secret && secret.length >= 8) {
      out = out.split(secret).join('***');
    }
  }
  return out;
}

function shortJson(value: unknown, max = MAX_ARGUMENT_CHARS): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? '';
  } catch {
    text = String(value);
  }
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/**
 * Keeps the little state the transcript needs (the answer's text gathered until the next
 * event, so it reads as one paragraph) and gives back the lines to write for each event.
 */
export class TranscriptFormatter {
  private answer = '';

  constructor(private readonly secrets: () => readonly (string | undefined)[] = () => []) {}

  /** The lines to write for one event (none while the answer's text is still coming). */
  format(event: AgentEvent): TranscriptLine[] {
    const lines: TranscriptLine[] = [{ level: 'debug', text: `event ${shortJson(event, MAX_EVENT_CHARS)}` }];
    if (event.type === 'assistant_text') {
      this.answer += event.text ?? '';
    } else if (event.type !== 'text_delta') {
      // Deltas repeat the answer's text as it streams: protocol detail, in the debug line only.
      lines.push(...this.flush());
      const said = this.describe(event);
      if (said) {
        lines.push(said);
      }
    }
    return lines.map((line) => ({ ...line, text: redact(line.text, this.secrets()) }));
  }

  /** The answer gathered so far, as one line (none when there is none). */
  private flush(): TranscriptLine[] {
    const text = this.answer.trim();
    this.answer = '';
    return text ? [{ level: 'info', text: `Toolgate: ${text}` }] : [];
  }

  private describe(event: AgentEvent): TranscriptLine | undefined {
    const info = (text: string): TranscriptLine => ({ level: 'info', text });
    switch (event.type) {
      case 'run_started':
        return info(`You: ${event.task ?? ''}`);
      case 'tool_call': {
        const why = event.why ? ` — ${event.why}` : '';
        const decision = event.decision === 'ask' ? ' (waits for your review)' : event.decision === 'deny' ? ' (refused)' : '';
        return info(`→ ${event.tool ?? '?'} ${shortJson(event.arguments ?? {})}${decision}${why}`);
      }
      case 'tool_result': {
        const tool = event.tool ?? '?';
        if (event.success) {
          return info(`  ${tool}: ${event.decision === 'approved' ? 'accepted' : 'done'}`);
        }
        const how = event.decision === 'rejected' ? 'rejected' : event.decision === 'denied' ? 'refused' : 'failed';
        return { level: 'warn', text: `  ${tool}: ${how}: ${event.error ?? 'unknown error'}` };
      }
      case 'parse_error':
        return {
          level: 'warn',
          text: `The model's tool call could not be read: ${event.error ?? ''}${
            event.rawExcerpt ? `\n    ${String(event.rawExcerpt).slice(0, MAX_ARGUMENT_CHARS)}` : ''
          }`,
        };
      case 'tests_finished': {
        if (event.notRun) {
          return info(`Tests did not run: ${event.notRun}`);
        }
        const summary = (event.summary ?? {}) as Record<string, number>;
        return info(`Tests: ${summary.passed ?? 0} passed, ${summary.failed ?? 0} failed, ${summary.errors ?? 0} errors, ${summary.skipped ?? 0} skipped`);
      }
      case 'notice':
        return typeof event.message === 'string' ? info(event.message) : undefined;
      case 'run_finished': {
        const reason = event.reason ? ` — ${event.reason}` : '';
        const status = String(event.status ?? 'ended').replace(/_/g, ' ');
        const text = `Run ${status}${reason}`;
        return event.status && event.status !== 'completed' && event.status !== 'cancelled' ? { level: 'warn', text } : info(text);
      }
      default:
        // Anything else (mode changes, context fitting, progress lines, new kinds of event) is
        // protocol detail: its debug line above says it.
        return undefined;
    }
  }
}
