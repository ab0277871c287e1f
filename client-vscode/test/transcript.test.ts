import { describe, expect, it } from 'vitest';
import { TranscriptFormatter, redact, type TranscriptLine } from '../src/transcript';
import type { AgentEvent } from '../src/protocol';

const KEY = 'sk-live-1234567890abcdef';

function run(formatter: TranscriptFormatter, events: AgentEvent[]): TranscriptLine[] {
  return events.flatMap((event) => formatter.format(event));
}

const said = (lines: TranscriptLine[]) => lines.filter((l) => l.level !== 'debug').map((l) => l.text);

describe('TranscriptFormatter', () => {
  it('reads as a conversation: the task, the answer in one piece, each call and how it ended', () => {
    const lines = run(new TranscriptFormatter(), [
      { type: 'run_started', runId: 'r-1', task: 'fix add' },
      { type: 'assistant_text', runId: 'r-1', text: 'add sub' },
      { type: 'text_delta', runId: 'r-1', text: 'add sub' },
      { type: 'assistant_text', runId: 'r-1', text: 'tracts.' },
      { type: 'tool_call', runId: 'r-1', callId: 'c1', tool: 'write_file', arguments: { path: 'calc.py' }, decision: 'ask', why: 'fix it' },
      { type: 'tool_result', runId: 'r-1', callId: 'c1', tool: 'write_file', success: false, error: 'rejected: no', decision: 'rejected' },
      { type: 'tests_finished', runId: 'r-1', summary: { total: 4, passed: 1, failed: 1, errors: 0, skipped: 2, duration_seconds: 0.1 } },
      { type: 'run_finished', runId: 'r-1', status: 'completed', answer: 'Done.' },
    ]);
    expect(said(lines)).toEqual([
      'You: fix add',
      'Toolgate: add subtracts.',
      '→ write_file {"path":"calc.py"} (waits for your review) — fix it',
      '  write_file: rejected: rejected: no',
      'Tests: 1 passed, 1 failed, 0 errors, 2 skipped',
      'Run completed',
    ]);
    // No id and no raw event at the info level: those are the debug level's.
    expect(said(lines).join('\n')).not.toMatch(/r-1|text_delta|\{"type"/);
  });

  it('keeps the protocol, each event as sent, at the debug level only', () => {
    const lines = run(new TranscriptFormatter(), [
      { type: 'text_delta', runId: 'r-1', text: 'hel' },
      { type: 'mode_changed', runId: 'r-1', mode: 'text' },
    ]);
    expect(lines.every((l) => l.level === 'debug')).toBe(true);
    expect(lines[0].text).toBe('event {"type":"text_delta","runId":"r-1","text":"hel"}');
    expect(lines[1].text).toContain('"mode":"text"');
  });

  it('says what happened when the tests did not run, not their zero counts', () => {
    const summary = { total: 0, passed: 0, failed: 0, errors: 0, skipped: 0, duration_seconds: 3 };
    const lines = new TranscriptFormatter().format({ type: 'tests_finished', runId: 'r-1', summary, notRun: 'timed out after 3 s; its process group was killed' });
    expect(said(lines)).toEqual(['Tests did not run: timed out after 3 s; its process group was killed']);
  });

  it('warns of a run that ended badly', () => {
    const lines = new TranscriptFormatter().format({ type: 'run_finished', runId: 'r-1', status: 'limit_reached', reason: 'maxSteps 30' });
    expect(lines.at(-1)).toEqual({ level: 'warn', text: 'Run limit reached — maxSteps 30' });
  });

  it('shortens long arguments', () => {
    const lines = new TranscriptFormatter().format({ type: 'tool_call', tool: 'write_file', arguments: { content: 'x'.repeat(2000) }, decision: 'ask' });
    const line = said(lines)[0];
    expect(line.length).toBeLessThan(600);
    expect(line).toContain('…');
  });

  it('never writes the API key, wherever it appears', () => {
    const lines = run(new TranscriptFormatter(() => [KEY]), [
      { type: 'assistant_text', text: `my key is ${KEY}` },
      { type: 'tool_call', tool: 'run_command', arguments: { command: `curl -H ${KEY}` }, decision: 'ask' },
      { type: 'run_finished', status: 'failed', reason: `401 for ${KEY}` },
    ]);
    const all = lines.map((l) => l.text).join('\n');
    expect(all).not.toContain(KEY);
    expect(said(lines).join('\n').match(/\*\*\*/g)?.length).toBe(3);
  });
});

describe('redact', () => {
  it('ignores missing and very short secrets', () => {
    expect(redact('a b c', [undefined, 'b'])).toBe('a b c');
    expect(redact(`x ${KEY} y ${KEY}`, [KEY])).toBe('x *** y ***');
  });
});
