import { describe, expect, it } from 'vitest';
import { TranscriptFormatter, redact } from '../src/transcript';

const at = new Date(2026, 0, 1, 9, 5, 7);
const KEY = 'sk-live-1234567890abcdef';

describe('TranscriptFormatter', () => {
  it('joins streamed text and puts each call on its own line with its decision', () => {
    const formatter = new TranscriptFormatter();
    const text = [
      formatter.format({ type: 'run_started', runId: 'r-1', task: 'fix add' }, at),
      formatter.format({ type: 'assistant_text', runId: 'r-1', text: 'add sub' }, at),
      formatter.format({ type: 'assistant_text', runId: 'r-1', text: 'tracts.' }, at),
      formatter.format(
        { type: 'tool_call', runId: 'r-1', callId: 'c1', tool: 'write_file', arguments: { path: 'calc.py' }, decision: 'ask', why: 'fix it' },
        at,
      ),
      formatter.format({ type: 'tool_result', runId: 'r-1', callId: 'c1', tool: 'write_file', success: false, error: 'rejected: no', decision: 'rejected' }, at),
      formatter.format({ type: 'tests_finished', runId: 'r-1', summary: { total: 4, passed: 1, failed: 1, errors: 0, skipped: 2, duration_seconds: 0.1 } }, at),
      formatter.format({ type: 'run_finished', runId: 'r-1', status: 'completed', answer: 'Done.' }, at),
    ].join('');
    expect(text).toBe(
      [
        '[09:05:07] run started (r-1): fix add',
        '[09:05:07] assistant: add subtracts.',
        '[09:05:07] call write_file {"path":"calc.py"} → ask — fix it',
        '[09:05:07] result write_file [rejected] failed: rejected: no',
        '[09:05:07] tests: 1 passed, 1 failed, 0 errors, 2 skipped',
        '[09:05:07] run finished (r-1): completed',
        'Done.',
        '',
      ].join('\n'),
    );
  });

  it('says what happened when the tests did not run, not their zero counts', () => {
    const formatter = new TranscriptFormatter();
    const summary = { total: 0, passed: 0, failed: 0, errors: 0, skipped: 0, duration_seconds: 3 };
    const line = formatter.format({ type: 'tests_finished', runId: 'r-1', summary, notRun: 'timed out after 3 s; its process group was killed' }, at);
    expect(line).toBe('[09:05:07] tests did not run: timed out after 3 s; its process group was killed\n');
  });

  it('shortens long arguments', () => {
    const formatter = new TranscriptFormatter();
    const line = formatter.format({ type: 'tool_call', tool: 'write_file', arguments: { content: 'x'.repeat(2000) }, decision: 'ask' }, at);
    expect(line.length).toBeLessThan(600);
    expect(line).toContain('…');
  });

  it('never writes the API key, wherever it appears', () => {
    const formatter = new TranscriptFormatter(() => [KEY]);
    const text = [
      formatter.format({ type: 'assistant_text', text: `my key is ${KEY}` }, at),
      formatter.format({ type: 'tool_call', tool: 'run_command', arguments: { command: `curl -H ${KEY}` }, decision: 'ask' }, at),
      formatter.format({ type: 'run_finished', status: 'failed', reason: `401 for ${KEY}` }, at),
    ].join('');
    expect(text).not.toContain(KEY);
    expect(text.match(/\*\*\*/g)?.length).toBe(3);
  });

  it('prints unknown events rather than dropping them', () => {
    const formatter = new TranscriptFormatter();
    expect(formatter.format({ type: 'something_new', runId: 'r', n: 1 }, at)).toContain('something_new: {"type":"something_new"');
  });
});

describe('redact', () => {
  it('ignores missing and very short secrets', () => {
    expect(redact('a b c', [undefined, 'b'])).toBe('a b c');
    expect(redact(`x ${KEY} y ${KEY}`, [KEY])).toBe('x *** y ***');
  });
});
