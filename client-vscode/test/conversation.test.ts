import { describe, expect, it } from 'vitest';
import { Conversation, proposalCard, toolTarget } from '../src/chat/conversation';
import { makeProposal } from './helpers';

describe('Conversation', () => {
  it('ties the person\'s message to the run that starts, and streams the answer into one entry', () => {
    const chat = new Conversation('s-1');
    chat.addUser('fix add');
    chat.apply({ type: 'run_started', runId: 'r-1', sessionId: 's-1', task: 'fix add' });
    chat.apply({ type: 'text_delta', runId: 'r-1', sessionId: 's-1', text: '**add** ' });
    chat.apply({ type: 'text_delta', runId: 'r-1', sessionId: 's-1', text: 'is fixed' });
    expect(chat.list()).toMatchObject([
      { kind: 'user', text: 'fix add', runId: 'r-1' },
      { kind: 'assistant', text: '**add** is fixed', runId: 'r-1' },
    ]);
  });

  it('names the rules files a turn used in its header: the system prompt\'s, then those attached later, once each', () => {
    const chat = new Conversation('s-1');
    chat.addUser('fix add');
    chat.apply({ type: 'run_started', runId: 'r-1', sessionId: 's-1', task: 'fix add', rules: ['AGENTS.md', 'CLAUDE.md'] });
    expect(chat.apply({ type: 'rules_used', runId: 'r-1', sessionId: 's-1', rules: ['src/AGENTS.md', 'AGENTS.md'] })).toBe(true);
    // Nothing new: nothing to draw; another run's rules do not land on this turn.
    expect(chat.apply({ type: 'rules_used', runId: 'r-1', rules: ['CLAUDE.md'] })).toBe(false);
    expect(chat.apply({ type: 'rules_used', runId: 'r-2', rules: ['other.md'] })).toBe(false);
    expect(chat.list()).toMatchObject([{ kind: 'user', runId: 'r-1', rules: ['AGENTS.md', 'CLAUDE.md', 'src/AGENTS.md'] }]);
    // An older server sends no rules: the header names none.
    chat.apply({ type: 'run_started', runId: 'r-3', task: 'again' });
    expect(chat.list()[1]).not.toHaveProperty('rules');
  });

  it('shows the streamed text once when the server sends both assistant_text and text_delta', () => {
    const chat = new Conversation('s-1');
    chat.apply({ type: 'run_started', runId: 'r-1', task: 't' });
    chat.apply({ type: 'assistant_text', runId: 'r-1', text: 'Hel' });
    chat.apply({ type: 'assistant_text', runId: 'r-1', text: 'lo' });
    chat.apply({ type: 'text_delta', runId: 'r-1', text: 'Hello' });
    chat.apply({ type: 'assistant_text', runId: 'r-1', text: ' there' });
    chat.apply({ type: 'text_delta', runId: 'r-1', text: ' there' });
    const answers = chat.list().filter((e) => e.kind === 'assistant');
    expect(answers).toHaveLength(1);
    expect(answers[0]).toMatchObject({ text: 'Hello there' });
  });

  it('adds the person\'s message for a run started elsewhere (the Ask command, a quick fix)', () => {
    const chat = new Conversation('s-1');
    chat.apply({ type: 'run_started', runId: 'r-2', sessionId: 's-1', task: 'Fix test_add' });
    expect(chat.list()).toMatchObject([{ kind: 'user', text: 'Fix test_add', runId: 'r-2' }]);
  });

  it('ignores the events of another session', () => {
    const chat = new Conversation('s-1');
    expect(chat.apply({ type: 'run_started', runId: 'r-9', sessionId: 's-2', task: 'elsewhere' })).toBe(false);
    expect(chat.apply({ type: 'text_delta', runId: 'r-9', sessionId: 's-2', text: 'x' })).toBe(false);
    expect(chat.list()).toEqual([]);
  });

  it('puts text after a tool call into a new entry below the call\'s card', () => {
    const chat = new Conversation();
    chat.apply({ type: 'text_delta', runId: 'r-1', text: 'Reading.' });
    chat.apply({ type: 'tool_call', runId: 'r-1', callId: 'c1', tool: 'read_file', arguments: { path: 'calc.py' }, decision: 'auto' });
    chat.apply({ type: 'tool_result', runId: 'r-1', callId: 'c1', tool: 'read_file', success: true, decision: 'auto' });
    chat.apply({ type: 'text_delta', runId: 'r-1', text: 'Done.' });
    expect(chat.list().map((e) => e.kind)).toEqual(['assistant', 'tool', 'assistant']);
    expect(chat.list()[1]).toMatchObject({ name: 'read_file', target: 'calc.py', status: 'ok' });
  });

  it('joins a proposal to the card of the call that made it, and records its decision and reason', () => {
    const chat = new Conversation('s-1');
    chat.apply({ type: 'tool_call', runId: 'r-1', callId: 'c1', tool: 'write_file', arguments: { path: 'calc.py', content: '[9 characters]' }, decision: 'ask', why: 'add subtracts' });
    expect(chat.list()[0]).toMatchObject({ status: 'waiting' });
    expect(chat.addProposal(makeProposal(), 'calc.py')).toBe(true);
    const card = chat.list()[0];
    expect(card.kind === 'tool' && card.proposal).toMatchObject({ id: 'p-1', path: 'calc.py', added: 3, removed: 2, status: 'pending' });
    chat.resolveProposal({ id: 'p-1', status: 'rejected', reason: 'keep it' });
    expect(chat.list()[0]).toMatchObject({ status: 'rejected', proposal: { status: 'rejected', reason: 'Reason: keep it' } });
    chat.apply({ type: 'tool_result', runId: 'r-1', callId: 'c1', tool: 'write_file', success: false, decision: 'rejected', error: 'rejected: keep it' });
    expect(chat.list()).toHaveLength(1);
  });

  it('names on the card the problems the accepted change caused', () => {
    const chat = new Conversation('s-1');
    chat.apply({ type: 'tool_call', runId: 'r-1', callId: 'c1', tool: 'write_file', arguments: { path: 'calc.py', content: '[9 characters]' }, decision: 'ask' });
    chat.addProposal(makeProposal(), 'calc.py');
    chat.resolveProposal({ id: 'p-1', status: 'accepted' });
    const problem = { path: 'calc.ts', line: 2, source: 'ts', message: "Cannot find name 'c'.", severity: 'error' };
    expect(chat.apply({ type: 'proposal_problems', runId: 'r-1', proposalId: 'p-1', problems: [problem] })).toBe(true);
    expect(chat.list()[0]).toMatchObject({ status: 'ok', proposal: { status: 'accepted', problems: [problem] } });
    // Another proposal's problems have no card here.
    expect(chat.apply({ type: 'proposal_problems', runId: 'r-1', proposalId: 'p-9', problems: [problem] })).toBe(false);
  });

  it('gives a proposal without a card one of its own, unless its run belongs to another session', () => {
    const chat = new Conversation('s-1');
    chat.apply({ type: 'run_started', runId: 'r-1', sessionId: 's-1', task: 't' });
    expect(chat.addProposal(makeProposal({ id: 'p-2' }), 'calc.py')).toBe(true);
    expect(chat.addProposal(makeProposal({ id: 'p-3', runId: 'r-other' }), 'calc.py')).toBe(false);
    expect(chat.list().filter((e) => e.kind === 'tool')).toHaveLength(1);
  });

  it('attaches the test summary to the run_tests card and notes a run that did not complete', () => {
    const chat = new Conversation();
    chat.apply({ type: 'tool_call', runId: 'r-1', callId: 'c1', tool: 'run_tests', toolKind: 'run', arguments: {}, decision: 'auto' });
    chat.apply({ type: 'tool_call', runId: 'r-1', callId: 'c2', tool: 'read_file', toolKind: 'read', arguments: {}, decision: 'auto' });
    chat.apply({ type: 'tests_finished', runId: 'r-1', summary: { total: 2, passed: 1, failed: 1, skipped: 0, errors: 0, duration_seconds: 0.1 } });
    chat.apply({ type: 'run_finished', runId: 'r-1', status: 'limit_reached', reason: 'max steps' });
    expect(chat.list()).toMatchObject([
      { kind: 'tool', name: 'run_tests', toolKind: 'run', tests: { failed: 1 } },
      { kind: 'tool', name: 'read_file', toolKind: 'read' },
      { kind: 'note', text: 'Run limit reached: max steps' },
      { kind: 'run', runId: 'r-1', status: 'limit_reached', files: [], undo: 'none' },
    ]);
  });

  it('says a run_tests card did not run its tests rather than show zero counts', () => {
    const chat = new Conversation();
    chat.apply({ type: 'tool_call', runId: 'r-1', callId: 'c1', tool: 'run_tests', toolKind: 'run', arguments: {}, decision: 'auto' });
    const summary = { total: 0, passed: 0, failed: 0, skipped: 0, errors: 0, duration_seconds: 0.1 };
    chat.apply({ type: 'tests_finished', runId: 'r-1', summary, notRun: 'No module named pytest in /p/.venv/bin/python' });
    const [card] = chat.list();
    expect(card).toMatchObject({ kind: 'tool', name: 'run_tests', summary: 'tests did not run: No module named pytest in /p/.venv/bin/python' });
    expect(card).not.toHaveProperty('tests');
  });

  it('ends a run with what it changed, offering its undo once', () => {
    const chat = new Conversation();
    const account = { files: [{ path: 'calc.py', added: 1, removed: 1 }, { path: 'new.py', added: 3, removed: 0 }] };
    chat.apply({ type: 'run_finished', runId: 'r-2', status: 'completed', account });
    chat.apply({ type: 'run_finished', runId: 'r-2', status: 'completed', account });
    expect(chat.list()).toEqual([
      { kind: 'run', key: 'run-r-2', runId: 'r-2', status: 'completed', files: ['calc.py', 'new.py'], undo: 'available' },
    ]);
    expect(chat.setUndo('r-2', 'undone', 'Put back calc.py.')).toBe(true);
    expect(chat.setUndo('r-9', 'undone')).toBe(false);
    expect(chat.list()[0]).toMatchObject({ undo: 'undone', undoNote: 'Put back calc.py.' });
  });

  it('loads a stored transcript: messages, answers, calls with their proposal, notes', () => {
    const chat = new Conversation();
    chat.load('s-7', [
      { kind: 'user', text: 'fix add', runId: 'r-1', rules: ['AGENTS.md'] },
      { kind: 'tool', runId: 'r-1', callId: 'c1', name: 'write_file', toolKind: 'change', arguments: { path: 'calc.py', _reasoningForCall: 'add subtracts' }, status: 'rejected', summary: 'rejected: no', proposalId: 'p-1' },
      { kind: 'assistant', text: 'Done.', runId: 'r-1' },
      { kind: 'note', text: 'Older turns summarised.' },
    ]);
    expect(chat.sessionId).toBe('s-7');
    expect(chat.list()).toMatchObject([
      { kind: 'user', text: 'fix add', rules: ['AGENTS.md'] },
      { kind: 'tool', name: 'write_file', toolKind: 'change', target: 'calc.py', status: 'rejected', summary: 'rejected: no', proposal: { id: 'p-1', why: 'add subtracts', reason: 'rejected: no' } },
      { kind: 'assistant', text: 'Done.' },
      { kind: 'note', text: 'Older turns summarised.' },
    ]);
    // A proposal still pending after the reload fills in the card that names it.
    chat.addProposal(makeProposal({ id: 'p-1' }), 'calc.py');
    const card = chat.list()[1];
    expect(card.kind === 'tool' && card.proposal?.hunks).toHaveLength(2);
  });

  it('loads plans with their decision and scaffolded gaps, and runs with their undo, in order', () => {
    const chat = new Conversation();
    chat.load('s-8', [
      { kind: 'user', text: 'fix add', runId: 'r-1' },
      { kind: 'run', runId: 'r-1', status: 'completed', files: ['calc.py'], undo: 'undone', undoneBy: 'u-1' },
      {
        kind: 'plan',
        plan: {
          planId: 'p-1',
          goal: 'Publish',
          status: 'partial',
          steps: [{ step_id: 'render', capability: 'docs.render', tool: null }],
          gaps: [{ step_id: 'render', missing_capability: 'docs.render', reason: 'no_capability_match', reason_message: 'no tool provides docs.render', proposed_tool_name: 'docs_render' }],
        },
        decision: 'dropped',
        scaffolded: { render: { tool: 'docs_render', folder: 'tools/docs_render' } },
      },
      { kind: 'plan', plan: { planId: 'p-2', goal: 'Look', status: 'ready', steps: [], gaps: [] }, decision: 'approved', runId: 'w-1' },
      { kind: 'run', runId: 'w-1', status: 'completed', files: [], undo: 'none' },
      { kind: 'plan', plan: { planId: 'p-3', goal: 'Check', status: 'ready', steps: [], gaps: [] }, decision: 'approved', runId: 'w-2' },
      { kind: 'run', runId: 'w-2', status: 'failed', reason: 'step check failed', files: [], undo: 'none' },
      { kind: 'plan', plan: { planId: 'p-4', goal: 'Still', status: 'ready', steps: [], gaps: [] }, decision: 'approved', runId: 'w-3' },
      { kind: 'run', runId: 'u-1', status: 'completed', files: ['calc.py'], undo: 'available', undoes: 'r-1' },
    ]);
    expect(chat.list()).toMatchObject([
      { kind: 'user', text: 'fix add' },
      { kind: 'run', runId: 'r-1', undo: 'undone', undoNote: 'Undone by a later undo.' },
      { kind: 'plan', plan: { planId: 'p-1', decision: 'dropped', steps: [{ gap: { toolName: 'docs_render', scaffolded: 'tools/docs_render' } }] } },
      { kind: 'plan', plan: { planId: 'p-2', decision: 'approved', runId: 'w-1', runStatus: 'completed' } },
      { kind: 'run', runId: 'w-1', undo: 'none' },
      { kind: 'plan', plan: { planId: 'p-3', decision: 'approved', runId: 'w-2', runStatus: 'failed' } },
      { kind: 'run', runId: 'w-2', status: 'failed' },
      // Its run has not ended (the window reloaded while it ran).
      { kind: 'plan', plan: { planId: 'p-4', decision: 'approved', runId: 'w-3' } },
      { kind: 'run', runId: 'u-1', undo: 'available', undoes: 'r-1', files: ['calc.py'] },
    ]);
  });

  it('tells an approved plan\'s card how its run ended, live', () => {
    const chat = new Conversation('s-1');
    chat.addPlan({ planId: 'p-1', goal: 'Look', status: 'ready', steps: [], gaps: [] });
    chat.planApproved('p-1', 'w-1');
    chat.apply({ type: 'run_started', runId: 'w-1', task: 'Look' });
    expect(chat.planCardOf('p-1')?.runStatus).toBeUndefined();
    chat.apply({ type: 'run_finished', runId: 'w-1', status: 'cancelled', reason: 'stopped' });
    expect(chat.planCardOf('p-1')).toMatchObject({ decision: 'approved', runId: 'w-1', runStatus: 'cancelled' });
  });

  it('keeps a message that could not be sent from taking the next run', () => {
    const chat = new Conversation('s-1');
    chat.addUser('first');
    chat.markUnsent();
    chat.apply({ type: 'run_started', runId: 'r-2', task: 'second' });
    expect(chat.list()).toMatchObject([
      { kind: 'user', text: 'first', runId: 'unsent' },
      { kind: 'user', text: 'second', runId: 'r-2' },
    ]);
  });
});

describe('card helpers', () => {
  it('counts added and removed lines per hunk', () => {
    const card = proposalCard(makeProposal(), 'calc.py');
    expect(card.hunks).toEqual([
      { index: 0, header: '@@ -2 +2 @@', added: 1, removed: 1, oldText: '    return a - b\n', newText: '    return a + b\n', line: 2 },
      expect.objectContaining({ index: 1, header: '@@ -6,1 +6,2 @@', added: 2, removed: 1 }),
    ]);
  });

  it('names a call\'s target by its path, pattern or command', () => {
    expect(toolTarget({ path: 'a.py', content: '[3 characters]' })).toBe('a.py');
    expect(toolTarget({ pattern: 'def add' })).toBe('def add');
    expect(toolTarget({ command: 'pytest -q' })).toBe('pytest -q');
    expect(toolTarget(null)).toBe('');
  });

  it('draws a plan once, with the tool of each step and each gap', () => {
    const chat = new Conversation();
    const payload = {
      planId: 'p-1',
      goal: 'Publish the README',
      status: 'partial',
      steps: [
        { step_id: 'read', capability: 'fs.read', tool: 'read_file' },
        { step_id: 'render', capability: 'docs.render', tool: null },
      ],
      gaps: [
        {
          step_id: 'render',
          missing_capability: 'docs.render',
          reason: 'no_capability_match',
          reason_message: 'no tool provides docs.render',
          proposed_tool_name: 'docs_render',
        },
      ],
    };
    expect(chat.addPlan(payload)).toBe(true);
    expect(chat.addPlan(payload)).toBe(false);
    expect(chat.list()).toEqual([
      {
        kind: 'plan',
        key: 'plan-p-1',
        plan: {
          planId: 'p-1',
          goal: 'Publish the README',
          status: 'partial',
          steps: [
            { stepId: 'read', capability: 'fs.read', tool: 'read_file' },
            {
              stepId: 'render',
              capability: 'docs.render',
              tool: null,
              gap: { reason: 'no_capability_match', message: 'no tool provides docs.render', toolName: 'docs_render' },
            },
          ],
        },
      },
    ]);
    // What the list hands out is a copy: changing it changes nothing here.
    const copy = chat.list()[0];
    if (copy.kind === 'plan') {
      copy.plan.steps[1].gap!.scaffolded = 'tools/x';
    }
    expect(chat.planCardOf('p-1')?.steps[1].gap?.scaffolded).toBeUndefined();
  });
});
