/** Turns toolgate/event notifications into the text of the "Toolgate" output channel. */
import type { AgentEvent } from './protocol';

const MAX_ARGUMENT_CHARS = 400;

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

function shortJson(value: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? '';
  } catch {
    text = String(value);
  }
  return text.length > MAX_ARGUMENT_CHARS ? `${text.slice(0, MAX_ARGUMENT_CHARS)}…` : text;
}

/**
 * Keeps the little state the transcript needs (whether streamed assistant text is open)
 * and gives back the text to append for each event.
 */
export class TranscriptFormatter {
  private inText = false;

  constructor(private readonly secrets: () => readonly (string | undefined)[] = () => []) {}

  /** The text to append to the output channel for one event ('' for none). */
  format(event: AgentEvent, now: Date = new Date()): string {
    const time = now.toTimeString().slice(0, 8);
    let out = '';
    if (event.type === 'assistant_text') {
      if (!this.inText) {
        out += `[${time}] assistant: `;
        this.inText = true;
      }
      out += event.text ?? '';
      return redact(out, this.secrets());
    }
    if (this.inText) {
      out += '\n';
      this.inText = false;
    }
    out += `[${time}] ${this.describe(event)}\n`;
    return redact(out, this.secrets());
  }

  private describe(event: AgentEvent): string {
    const run = event.runId ? ` (${event.runId})` : '';
    switch (event.type) {
      case 'run_started':
        return `run started${run}: ${event.task ?? ''}`;
      case 'tool_call': {
        const why = event.why ? ` — ${event.why}` : '';
        return `call ${event.tool ?? '?'} ${shortJson(event.arguments ?? {})} → ${event.decision ?? '?'}${why}`;
      }
      case 'tool_result': {
        const outcome = event.success ? 'ok' : `failed: ${event.error ?? 'unknown error'}`;
        return `result ${event.tool ?? '?'} [${event.decision ?? '?'}] ${outcome}`;
      }
      case 'parse_error':
        return `could not parse a tool call: ${event.error ?? ''}${
          event.rawExcerpt ? `\n    ${String(event.rawExcerpt).slice(0, MAX_ARGUMENT_CHARS)}` : ''
        }`;
      case 'mode_changed':
        return `tool-calling mode: ${shortJson(Object.fromEntries(
          Object.entries(event).filter(([key]) => key !== 'type' && key !== 'runId'),
        ))}`;
      case 'tests_finished': {
        if (event.notRun) {
          return `tests did not run: ${event.notRun}`;
        }
        const summary = (event.summary ?? {}) as Record<string, number>;
        return `tests: ${summary.passed ?? 0} passed, ${summary.failed ?? 0} failed, ${summary.errors ?? 0} errors, ${summary.skipped ?? 0} skipped`;
      }
      case 'run_finished': {
        const reason = event.reason ? ` — ${event.reason}` : '';
        const answer = event.answer ? `\n${event.answer}` : '';
        return `run finished${run}: ${event.status ?? '?'}${reason}${answer}`;
      }
      default:
        return `${event.type}: ${shortJson(event)}`;
    }
  }
}
