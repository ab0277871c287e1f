import { beforeEach, describe, expect, it, vi } from 'vitest';

vi.mock('../src/vscodeapi', () => import('./fakeapi'));

import { fake, fireDiagnostics, uri } from './fakeapi';
import { Controller, waitForDiagnostics } from '../src/controller';
import { noServerProgress } from '../src/progress';
import { ProposalStore } from '../src/proposals';
import { DiffReview } from '../src/review';
import { decisions, FakeServer, flush, makeProposal } from './helpers';

const KEY = 'sk-test-abcdefghijkl';

function setup(openDiff: 'auto' | 'notify' = 'auto') {
  const store = new ProposalStore();
  const server = new FakeServer();
  const review = new DiffReview(store);
  const output = {
    text: '',
    debugText: '',
    info(t: string) { this.text += `${t}\n`; },
    warn(t: string) { this.text += `${t}\n`; },
    debug(t: string) { this.debugText += `${t}\n`; },
    show: vi.fn(),
  };
  const statusBar = { text: '', tooltip: undefined as unknown, show: vi.fn() };
  const waited: string[] = [];
  const controller = new Controller(store, server, review, output, statusBar, () => openDiff, () => [KEY], async (u) => {
    waited.push(u);
  });
  return { store, server, review, output, statusBar, controller, waited };
}

describe('Controller: proposals', () => {
  beforeEach(() => fake.reset());

  it('opens the diff of a new proposal when no proposal diff is in view', async () => {
    const { controller, statusBar } = setup();
    await controller.handleProposal(makeProposal());
    expect(fake.commands.filter((c) => c.id === 'vscode.diff')).toHaveLength(1);
    expect(statusBar.text).toContain('1 pending');
    expect(fake.messages).toEqual([]);
  });

  it('offers View Diff / Accept / Reject when a diff is already in view, and Accept accepts', async () => {
    const { controller, server, store } = setup();
    fake.tabs = [
      {
        original: uri('file', '/work/a.py'),
        modified: uri('toolgate-proposal', '/work/a.py', 'id=p-0'),
        isActive: true,
        isVisible: true,
        tab: {},
      },
    ];
    store.upsert(makeProposal({ id: 'p-0', uri: 'file:///work/a.py' }));
    fake.messageAnswers = ['Accept'];
    await controller.handleProposal(makeProposal({ id: 'p-1' }));
    expect(fake.messages[0]).toMatchObject({
      level: 'info',
      message: 'Toolgate proposes write_file on calc.py — add subtracts',
      items: ['View Diff', 'Accept', 'Reject'],
    });
    expect(decisions(server)).toEqual([{ command: 'toolgate.acceptProposal', args: ['p-1'] }]);
  });

  it('in notify mode only notifies; View Diff opens the diff', async () => {
    const { controller } = setup('notify');
    fake.messageAnswers = ['View Diff'];
    await controller.handleProposal(makeProposal());
    expect(fake.messages).toHaveLength(1);
    expect(fake.commands.filter((c) => c.id === 'vscode.diff')).toHaveLength(1);
  });

  it('does not re-open the diff when the server re-sends a re-based proposal, but refreshes it', async () => {
    const { controller } = setup();
    const refreshed: string[] = [];
    await controller.handleProposal(makeProposal(), (p) => refreshed.push(p.proposedText));
    await controller.handleProposal(makeProposal({ proposedText: 'new' }), (p) => refreshed.push(p.proposedText));
    expect(fake.commands.filter((c) => c.id === 'vscode.diff')).toHaveLength(1);
    expect(refreshed.at(-1)).toBe('new');
  });

  it('reports the other servers\' diagnostics for the file when a change is proposed and after it was accepted', async () => {
    const { controller, server, waited, store } = setup();
    await controller.handleProposal(makeProposal());
    // Before the change: the file's problems as they are, without waiting.
    expect(waited).toEqual([]);
    expect(server.calls).toEqual([{ command: 'toolgate.reportDiagnostics', args: [{ uri: 'file:///work/calc.py', diagnostics: [] }] }]);
    server.calls = [];
    const range = { start: { line: 1, character: 4 }, end: { line: 1, character: 8 } };
    fake.diagnostics.set('file:///work/calc.py', [
      { range, severity: 0, message: '"b" is not defined', source: 'Pylance' },
      { range, severity: 0, message: 'test failed', source: 'toolgate' },
    ]);
    await controller.handleProposalResolved({ id: 'p-1', status: 'accepted', hunksApplied: [0, 1] });
    expect(store.size).toBe(0);
    expect(waited).toEqual(['file:///work/calc.py']);
    expect(server.calls).toEqual([
      {
        command: 'toolgate.reportDiagnostics',
        args: [{ uri: 'file:///work/calc.py', diagnostics: [{ range, severity: 1, message: '"b" is not defined', source: 'Pylance' }] }],
      },
    ]);
  });

  it('reports nothing after a rejection, and warns about a stale proposal', async () => {
    const { controller, server } = setup();
    await controller.handleProposal(makeProposal({ id: 'a' }));
    await controller.handleProposal(makeProposal({ id: 'b' }));
    await controller.handleProposalResolved({ id: 'a', status: 'rejected', reason: 'no' });
    await controller.handleProposalResolved({ id: 'b', status: 'stale', reason: 'the file changed' });
    // Only the reports made when each change was proposed.
    expect(server.calls.map((c) => c.command)).toEqual(['toolgate.reportDiagnostics', 'toolgate.reportDiagnostics']);
    expect(fake.messages.at(-1)).toMatchObject({ level: 'warning', message: expect.stringContaining('no longer applies: the file changed') });
  });

  it('answers per-hunk decisions with a partial accept, a full accept, or a reject', async () => {
    const { controller, server } = setup();
    await controller.handleProposal(makeProposal({ id: 'a' }));
    await controller.decideHunk('a', 0, true);
    expect(decisions(server)).toEqual([]);
    await controller.decideHunk('a', 1, false);
    await controller.handleProposal(makeProposal({ id: 'b' }));
    await controller.decideHunk('b', 0, true);
    await controller.decideHunk('b', 1, true);
    await controller.handleProposal(makeProposal({ id: 'c' }));
    await controller.decideHunk('c', 0, false);
    await controller.decideHunk('c', 1, false);
    expect(decisions(server)).toEqual([
      { command: 'toolgate.acceptProposal', args: ['a', [0]] },
      { command: 'toolgate.acceptProposal', args: ['b'] },
      { command: 'toolgate.rejectProposal', args: ['c'] },
    ]);
  });
});

describe('Controller: runs', () => {
  beforeEach(() => fake.reset());

  it('shows a cancellable progress while a run is active; Cancel sends toolgate.cancel with the run id', async () => {
    const { controller, server, statusBar } = setup();
    controller.setServerState('idle');
    controller.handleEvent({ type: 'run_started', runId: 'r-9', task: 'fix it' });
    expect(statusBar.text).toContain('running');
    expect(controller.activeRunId).toBe('r-9');
    expect(fake.progress).toHaveLength(1);
    controller.handleEvent({ type: 'tool_call', runId: 'r-9', tool: 'read_file', decision: 'auto' });
    expect(fake.progress[0].reports).toEqual(['fix it', 'read_file (auto)']);
    fake.progress[0].cancel();
    await flush();
    expect(server.calls).toEqual([{ command: 'toolgate.cancel', args: ['r-9'] }]);
    controller.handleEvent({ type: 'run_finished', runId: 'r-9', status: 'cancelled' });
    await flush();
    expect(fake.progress[0].done).toBe(true);
    expect(statusBar.text).toContain('idle');
    expect(fake.messages).toEqual([]);
  });

  it('does not take a run that already finished for the active one when the ask answers late', async () => {
    const { controller, server } = setup();
    server.execute = async <T>(command: string, args: unknown[]): Promise<T> => {
      server.calls.push({ command, args });
      controller.handleEvent({ type: 'run_started', runId: 'r-fast', task: 't' });
      controller.handleEvent({ type: 'run_finished', runId: 'r-fast', status: 'completed' });
      return { runId: 'r-fast' } as T;
    };
    await controller.ask('t');
    expect(controller.activeRunId).toBeUndefined();
  });

  it('draws no notification of its own while the chat view shows the run', async () => {
    const { controller } = setup();
    let visible = true;
    controller.chatVisible = () => visible;
    controller.handleEvent({ type: 'run_started', runId: 'r-1', task: 't' });
    controller.handleEvent({ type: 'run_finished', runId: 'r-1', status: 'completed' });
    expect(fake.progress).toHaveLength(0);
    visible = false;
    controller.handleEvent({ type: 'run_started', runId: 'r-2', task: 't' });
    expect(fake.progress).toHaveLength(1);
  });

  it('tells the server it shows no $/progress, so each run has one progress only', () => {
    const capabilities: { window?: { workDoneProgress?: boolean; showMessage?: unknown } } = {
      window: { workDoneProgress: true, showMessage: {} },
    };
    noServerProgress.fillClientCapabilities(capabilities as never);
    expect(capabilities.window).toEqual({ workDoneProgress: false, showMessage: {} });
  });

  it('warns when a run ends badly and keeps the key out of the transcript', async () => {
    const { controller, output } = setup();
    controller.handleEvent({ type: 'run_started', runId: 'r-1', task: 't' });
    controller.handleEvent({ type: 'assistant_text', runId: 'r-1', text: `leaking ${KEY}` });
    controller.handleEvent({ type: 'run_finished', runId: 'r-1', status: 'limit_reached', reason: 'maxSteps 30' });
    expect(fake.messages[0]).toMatchObject({ level: 'warning', message: 'Toolgate run limit reached: maxSteps 30' });
    expect(output.text).not.toContain(KEY);
    expect(output.debugText).not.toContain(KEY);
    expect(output.text).toContain('Toolgate: leaking ***');
  });

  it('saves the documents the server asks for and reports which were saved', async () => {
    const { controller } = setup();
    fake.unsavable.add('file:///work/locked.py');
    const result = await controller.handleSaveDocuments({ uris: ['file:///work/calc.py', 'file:///work/locked.py'] });
    expect(result).toEqual({ saved: ['file:///work/calc.py'] });
    expect(fake.saved).toEqual(['file:///work/calc.py']);
  });

  it('sends ask with its context and keeps the run id', async () => {
    const { controller, server } = setup();
    server.answers['toolgate.ask'] = { runId: 'r-5' };
    const runId = await controller.ask('explain', { uri: 'file:///work/calc.py' });
    expect(runId).toBe('r-5');
    expect(server.calls[0]).toEqual({ command: 'toolgate.ask', args: [{ task: 'explain', context: { uri: 'file:///work/calc.py' } }] });
    expect(controller.activeRunId).toBe('r-5');
  });

  it('tells its listeners of an undo done, with the session that keeps it, but not of a dry run', async () => {
    const { controller, server } = setup();
    controller.currentSession = () => 's-4';
    const told: [string | undefined, string | undefined][] = [];
    controller.addListener({ onUndo: (done, sessionId) => void told.push([done.undoRunId, sessionId]) });
    const files = [{ path: 'calc.py', action: 'restore' as const, reason: '' }];
    server.answers['toolgate.undoRun'] = { runId: 'r-1', files, commits: [], revert: null, dryRun: true };
    await controller.undoRun({ dryRun: true });
    expect(told).toEqual([]);
    server.answers['toolgate.undoRun'] = { runId: 'r-1', files, commits: [], revert: null, dryRun: false, undoRunId: 'u-1' };
    await controller.undoRun({ runId: 'r-1' });
    expect(told).toEqual([['u-1', 's-4']]);
    expect(server.calls.at(-1)).toEqual({ command: 'toolgate.undoRun', args: [{ runId: 'r-1', sessionId: 's-4' }] });
  });

  it('forgets proposals when the server stops', async () => {
    const { controller, store } = setup();
    await controller.handleProposal(makeProposal());
    controller.setServerState('stopped');
    expect(store.size).toBe(0);
  });
});

describe('waitForDiagnostics', () => {
  beforeEach(() => fake.reset());

  it('resolves shortly after the file\'s diagnostics change', async () => {
    const started = Date.now();
    const done = waitForDiagnostics('file:///work/calc.py', 5000, 20);
    fireDiagnostics(['file:///work/other.py']);
    fireDiagnostics(['file:///work/calc.py']);
    await done;
    expect(Date.now() - started).toBeLessThan(1000);
    expect(fake.diagnosticListeners.size).toBe(0);
  });

  it('gives up at the timeout when nothing changes', async () => {
    const started = Date.now();
    await waitForDiagnostics('file:///work/calc.py', 50, 20);
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
  });
});

describe('Controller: the review loop', () => {
  beforeEach(() => fake.reset());

  it('says how a completed loop went, with its rounds and tests, and keeps it in the transcript', async () => {
    const { controller, output } = setup();
    controller.handleReviewLoop({
      loopId: 'loop-1',
      status: 'completed',
      approved: true,
      rounds: [
        { runId: 'r-1', status: 'completed', review: { approved: false, comments: [{}] } },
        { runId: 'r-2', status: 'completed', review: { approved: true, comments: [] } },
      ],
      tests: { passed: true, summary: { total: 3, passed: 3, failed: 0, errors: 0, skipped: 0 } },
    });
    const said = 'completed; approved after 2 rounds; tests: 3 passed, 0 failed, 0 errors';
    expect(fake.messages).toEqual([{ level: 'info', message: `Toolgate review loop: ${said}`, items: [] }]);
    expect(output.text).toContain(`Review loop: ${said}`);
    expect(output.debugText).toContain("review loop loop-1");
  });

  it('names the reason of a loop that ended in its run', () => {
    const { controller } = setup();
    controller.handleReviewLoop({
      loopId: 'loop-3',
      status: 'failed',
      reason: 'the review failed: no review: HTTP 500',
      rounds: [{ runId: 'r-1', status: 'completed' }],
    });
    expect(fake.messages[0].message).toBe(
      'Toolgate review loop: failed (the review failed: no review: HTTP 500); not approved after 1 round',
    );
  });

  it('warns when the loop ends without approval or tests, and offers Problems and the transcript', async () => {
    const { controller, output } = setup();
    fake.messageAnswers = ['Show Transcript'];
    controller.handleReviewLoop({
      loopId: 'loop-2',
      status: 'tests_failed',
      reason: 'the tests could not run: no pytest',
      approved: true,
      rounds: [{ runId: 'r-1', status: 'completed', review: { approved: true, comments: [] } }],
      tests: { error: 'no pytest' },
    });
    await flush();
    expect(fake.messages).toEqual([
      {
        level: 'warning',
        message:
          'Toolgate review loop: tests failed; approved after 1 round; tests did not run: no pytest',
        items: ['Show Problems', 'Show Transcript'],
      },
    ]);
    expect(output.show).toHaveBeenCalledWith(true);
  });
});
