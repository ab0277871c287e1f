import { describe, expect, it } from 'vitest';
import { codeBlock, highlight } from '../src/webview/code';
import { languageOf } from '../src/webview/diffView';
import { renderMarkdown } from '../src/webview/render';
import { Conversation } from '../src/chat/conversation';
import { clockTime, durationText, runName } from '../src/words';

describe('code blocks', () => {
  it('highlights a fenced block in its language and gives it a Copy button', () => {
    const html = renderMarkdown('```python\ndef add(a, b):\n    return a + b\n```');
    expect(html).toContain('<div class="code-block">');
    expect(html).toContain('<span class="code-language">python</span>');
    expect(html).toContain('data-action="copyCode"');
    expect(html).toContain('<span class="hljs-keyword">def</span>');
    expect(html).toContain('<code class="hljs language-python">');
  });

  it('leaves a language it does not know, or none, as escaped text', () => {
    expect(highlight('<b>', 'klingon')).toBe('&lt;b&gt;');
    expect(codeBlock('a < b', undefined)).toContain('<code class="hljs">a &lt; b</code>');
    expect(renderMarkdown('    indented <x>')).toContain('indented &lt;x&gt;');
  });

  it('knows a file\'s language by its extension', () => {
    expect(languageOf('src/calc.py')).toBe('python');
    expect(languageOf('a/b.TS')).toBe('typescript');
    expect(languageOf('Makefile')).toBeUndefined();
  });
});

describe('words instead of ids', () => {
  it('names a run by its time, or as an earlier one', () => {
    const at = new Date(2026, 0, 1, 9, 5).getTime();
    expect(clockTime(at)).toBe('09:05');
    expect(runName(at)).toBe('the run at 09:05');
    expect(runName(undefined)).toBe('an earlier run');
    expect(runName(at, 'undo')).toBe('the undo at 09:05');
  });

  it('says how long a call took', () => {
    expect(durationText(340)).toBe('340 ms');
    expect(durationText(1234)).toBe('1.2 s');
    expect(durationText(42_000)).toBe('42 s');
    expect(durationText(125_000)).toBe('2 min 5 s');
  });

  it('keeps a call\'s arguments, its result and the server\'s duration', () => {
    const chat = new Conversation();
    chat.apply({ type: 'run_started', runId: 'r-1', task: 't' });
    chat.apply({ type: 'tool_call', runId: 'r-1', callId: 'c1', tool: 'read_file', arguments: { path: 'a.py', _reasoningForCall: 'look' }, decision: 'auto' });
    chat.apply({ type: 'tool_result', runId: 'r-1', callId: 'c1', tool: 'read_file', success: true, result: 'x = 1', durationMs: 12.5 });
    const call = chat.list().find((e) => e.kind === 'tool');
    expect(call).toMatchObject({ arguments: { path: 'a.py' }, result: 'x = 1', durationMs: 12.5, status: 'ok' });
    // A server that sends no duration: the time between the call and its result here.
    chat.apply({ type: 'tool_call', runId: 'r-1', callId: 'c2', tool: 'read_file', arguments: {}, decision: 'auto' });
    chat.apply({ type: 'tool_result', runId: 'r-1', callId: 'c2', tool: 'read_file', success: true });
    const second = chat.list().filter((e) => e.kind === 'tool')[1];
    expect(second.kind === 'tool' && typeof second.durationMs).toBe('number');
  });

  it('names the run an undo undid by when it started', () => {
    const chat = new Conversation();
    chat.apply({ type: 'run_started', runId: 'r-1', task: 't' });
    chat.apply({ type: 'run_finished', runId: 'r-1', status: 'completed', account: { files: [{ path: 'a.py' }] } });
    chat.addUndoRun('u-1', 'r-1', ['a.py']);
    const [end, undo] = chat.list().filter((e) => e.kind === 'run');
    expect(end.kind === 'run' && typeof end.startedAt).toBe('number');
    expect(undo.kind === 'run' && undo.undoesStartedAt).toBe(end.kind === 'run' && end.startedAt);
    expect(undo).toMatchObject({ undoesAnUndo: false });
    // Undoing the undo names what it undid as an undo.
    chat.addUndoRun('u-2', 'u-1', ['a.py']);
    expect(chat.list().filter((e) => e.kind === 'run')[2]).toMatchObject({ undoes: 'u-1', undoesAnUndo: true });
  });
});

describe('times read back from a stored session', () => {
  it('names the run an undo undid by the time its turn began, as live', () => {
    const chat = new Conversation();
    const turn = new Date(2026, 0, 1, 14, 2, 30);
    chat.load('s-1', [
      { kind: 'user', text: 'fix add', runId: 'r-1', time: turn.toISOString() },
      { kind: 'run', runId: 'r-1', status: 'completed', files: ['calc.py'], undo: 'undone', time: new Date(2026, 0, 1, 14, 3).toISOString() },
      { kind: 'run', runId: 'u-1', status: 'completed', files: ['calc.py'], undo: 'available', undoes: 'r-1', time: new Date(2026, 0, 1, 14, 5).toISOString() },
    ]);
    const [end, undo] = chat.list().filter((e) => e.kind === 'run');
    expect(end).toMatchObject({ startedAt: turn.getTime() });
    expect(undo).toMatchObject({ undoesStartedAt: turn.getTime(), startedAt: new Date(2026, 0, 1, 14, 5).getTime() });
  });

  it('reads a session kept before times were sent as earlier runs', () => {
    const chat = new Conversation();
    chat.load('s-1', [
      { kind: 'user', text: 'fix add', runId: 'r-1' },
      { kind: 'run', runId: 'u-1', status: 'completed', files: [], undo: 'none', undoes: 'r-1', time: 'not a time' },
    ]);
    const [undo] = chat.list().filter((e) => e.kind === 'run');
    expect(undo).toMatchObject({ undoesStartedAt: undefined, startedAt: undefined });
  });
});
