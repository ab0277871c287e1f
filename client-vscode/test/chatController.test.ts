import { beforeEach, describe, expect, it, vi } from 'vitest';

vi.mock('../src/vscodeapi', () => import('./fakeapi'));

import { fake } from './fakeapi';
import { Controller } from '../src/controller';
import { ProposalStore } from '../src/proposals';
import { DiffReview } from '../src/review';
import { ChatController, CURRENT_SESSION_KEY } from '../src/chat/chatController';
import { isFromWebview, type ChatState, type ToWebview } from '../src/chat/messages';
import { decisions, FakeServer, flush, makeProposal } from './helpers';
import type { UndoResult } from '../src/protocol';
import { undoRunAfterAsking } from '../src/commands';

function setup(options: { running?: boolean; undoThroughCommand?: boolean } = {}) {
  const store = new ProposalStore();
  const server = new FakeServer();
  server.running = options.running ?? true;
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
  const controller = new Controller(store, server, review, output, statusBar, () => 'notify', () => [], async () => {});
  const memory = new Map<string, unknown>();
  const opened: string[] = [];
  const undone: string[] = [];
  const undoAnswers: (UndoResult | undefined)[] = [];
  const chat = new ChatController({
    controller,
    ensureServer: async () => server.running,
    openDiff: async (proposal) => void opened.push(proposal.id),
    undoRun: async (runId) => {
      undone.push(runId);
      // As the extension wires it: the Undo Last Run command's flow, through the controller.
      return options.undoThroughCommand ? undoRunAfterAsking(controller, runId) : undoAnswers.shift();
    },
    memento: {
      get: <T>(key: string) => memory.get(key) as T | undefined,
      update: async (key, value) => void memory.set(key, value),
    },
  });
  const posted: ToWebview[] = [];
  chat.attach((message) => posted.push(message));
  const last = (): ChatState => {
    chat.flush();
    const states = posted.filter((m): m is Extract<ToWebview, { type: 'state' }> => m.type === 'state');
    return states[states.length - 1].state;
  };
  return { store, server, controller, chat, memory, opened, posted, last, undone, undoAnswers };
}

const SESSIONS = {
  sessions: [
    { id: 's-2', title: 'Fix add', created: '2026-01-02', lastActivity: '2026-01-02', turns: 2 },
    { id: 's-1', title: 'Older', created: '2026-01-01', lastActivity: '2026-01-01', turns: 1 },
  ],
};

describe('ChatController: sending', () => {
  beforeEach(() => fake.reset());

  it('sends the message with the selection as context, in a new session the first time', async () => {
    const { chat, server, memory, last } = setup();
    fake.selection = {
      uri: 'file:///work/calc.py',
      text: 'return a - b',
      range: { start: { line: 1, character: 4 }, end: { line: 1, character: 16 } },
      empty: false,
    };
    server.answers['toolgate.ask'] = { runId: 'r-1', sessionId: 's-9' };
    server.answers['toolgate.listSessions'] = { sessions: [{ id: 's-9', title: 'Fix add', created: '', lastActivity: '', turns: 1 }] };
    await chat.handle({ type: 'send', text: '  fix add  ' });
    expect(server.calls[0]).toEqual({
      command: 'toolgate.ask',
      args: [{ task: 'fix add', context: { uri: 'file:///work/calc.py', range: fake.selection.range, text: 'return a - b' }, newSession: true }],
    });
    expect(memory.get(CURRENT_SESSION_KEY)).toBe('s-9');
    const state = last();
    expect(state.sessionId).toBe('s-9');
    expect(state.title).toBe('Fix add');
    expect(state.entries).toMatchObject([{ kind: 'user', text: 'fix add' }]);
    expect(state.status.state).toBe('running');
  });

  it('continues the session on screen', async () => {
    const { chat, server } = setup();
    chat.conversation.sessionId = 's-2';
    server.answers['toolgate.ask'] = { runId: 'r-2', sessionId: 's-2' };
    await chat.handle({ type: 'send', text: 'and now a test' });
    expect(server.calls[0].args).toEqual([{ task: 'and now a test' }].map((a) => ({ ...a, sessionId: 's-2' })));
  });

  it('shows a refused ask as an error and keeps the message from taking the next run', async () => {
    const { chat, server, last } = setup();
    server.failWith = new Error('a run is already active');
    await chat.handle({ type: 'send', text: 'again' });
    const state = last();
    expect(state.error).toBe('a run is already active');
    expect(state.entries).toMatchObject([{ kind: 'user', text: 'again', runId: 'unsent' }]);
  });

  it('says so when the server does not start, and sends nothing', async () => {
    const { chat, server, last } = setup({ running: false });
    await chat.handle({ type: 'send', text: 'hello' });
    expect(server.calls).toEqual([]);
    expect(last().error).toMatch(/not running/);
  });

  it('lets the Ask command continue the session the view shows', async () => {
    const { chat, controller, server } = setup();
    controller.currentSession = () => chat.conversation.sessionId;
    chat.conversation.sessionId = 's-5';
    await controller.ask('from the palette');
    expect(server.calls[0].args).toEqual([{ task: 'from the palette', sessionId: 's-5' }]);
  });

  it('Stop cancels the active run', async () => {
    const { chat, controller, server } = setup();
    controller.handleEvent({ type: 'run_started', runId: 'r-4', task: 't' });
    server.answers['toolgate.cancel'] = { cancelled: true };
    await chat.handle({ type: 'stop' });
    expect(server.calls).toEqual([{ command: 'toolgate.cancel', args: ['r-4'] }]);
  });

  it('draws the streamed answer and the run\'s status from the events', async () => {
    const { chat, controller, last } = setup();
    chat.conversation.sessionId = 's-1';
    controller.handleEvent({ type: 'run_started', runId: 'r-1', sessionId: 's-1', task: 'go' });
    controller.handleEvent({ type: 'text_delta', runId: 'r-1', sessionId: 's-1', text: 'Hello ' });
    controller.handleEvent({ type: 'tool_call', runId: 'r-1', sessionId: 's-1', callId: 'c', tool: 'read_file', arguments: { path: 'a.py' }, decision: 'auto' });
    expect(last().status).toEqual({ state: 'running', detail: 'read_file' });
    controller.handleEvent({ type: 'run_finished', runId: 'r-1', sessionId: 's-1', status: 'cancelled' });
    const state = last();
    expect(state.status).toEqual({ state: 'idle', detail: 'cancelled' });
    expect(state.entries.map((e) => e.kind)).toEqual(['user', 'assistant', 'tool', 'note', 'run']);
  });

  it('posts streamed text at most every 50 ms, not per piece', async () => {
    const { chat, controller, posted } = setup();
    chat.conversation.sessionId = 's-1';
    posted.length = 0;
    for (let i = 0; i < 20; i++) {
      controller.handleEvent({ type: 'text_delta', runId: 'r-1', sessionId: 's-1', text: 'x' });
    }
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(posted.length).toBe(1);
  });
});

describe('ChatController: proposals from their cards', () => {
  beforeEach(() => fake.reset());

  it('accepts all of a proposal, some of its hunks, or none (a rejection)', async () => {
    const { chat, controller, server } = setup();
    await controller.handleProposal(makeProposal());
    await chat.handle({ type: 'accept', proposalId: 'p-1' });
    await chat.handle({ type: 'accept', proposalId: 'p-1', hunks: [0, 1] });
    await chat.handle({ type: 'accept', proposalId: 'p-1', hunks: [1] });
    await chat.handle({ type: 'accept', proposalId: 'p-1', hunks: [] });
    expect(decisions(server).map((c) => [c.command, c.args])).toEqual([
      ['toolgate.acceptProposal', ['p-1']],
      ['toolgate.acceptProposal', ['p-1']],
      ['toolgate.acceptProposal', ['p-1', [1]]],
      ['toolgate.rejectProposal', ['p-1']],
    ]);
  });

  it('asks for an optional reason on Reject…, and Escape rejects nothing', async () => {
    const { chat, controller, server } = setup();
    await controller.handleProposal(makeProposal());
    fake.inputAnswers = ['  not like this ', undefined, ''];
    await chat.handle({ type: 'reject', proposalId: 'p-1' });
    await chat.handle({ type: 'reject', proposalId: 'p-1' });
    await chat.handle({ type: 'reject', proposalId: 'p-1' });
    expect(fake.inputBoxes[0].options.title).toBe('Reject write_file: calc.py');
    expect(decisions(server).map((c) => c.args)).toEqual([['p-1', 'not like this'], ['p-1']]);
  });

  it('opens the diff of a pending proposal and links a test run to Problems', async () => {
    const { chat, controller, opened, last } = setup();
    await controller.handleProposal(makeProposal());
    await chat.handle({ type: 'openDiff', proposalId: 'p-1' });
    expect(opened).toEqual(['p-1']);
    await chat.handle({ type: 'openDiff', proposalId: 'p-gone' });
    expect(last().error).toMatch(/no longer waiting/);
    await chat.handle({ type: 'showProblems' });
    expect(fake.commands.map((c) => c.id)).toContain('workbench.panel.markers.view.focus');
  });

  it('shows a proposal decided elsewhere (the diff editor) as decided on its card', async () => {
    const { controller, last } = setup();
    controller.handleEvent({ type: 'tool_call', runId: 'r-1', callId: 'c1', tool: 'write_file', arguments: { path: 'calc.py' }, decision: 'ask' });
    await controller.handleProposal(makeProposal());
    expect(last().entries[0]).toMatchObject({ kind: 'tool', proposal: { id: 'p-1', status: 'pending' } });
    await controller.handleProposalResolved({ id: 'p-1', status: 'accepted', hunksApplied: [0, 1] });
    await flush();
    expect(last().entries[0]).toMatchObject({ status: 'ok', proposal: { status: 'accepted' } });
  });
});

describe('ChatController: sessions', () => {
  beforeEach(() => fake.reset());

  it('restores the session it showed last (after a reload), else the most recent', async () => {
    const { chat, server, memory, last } = setup();
    server.answers['toolgate.listSessions'] = SESSIONS;
    server.answers['toolgate.loadSession'] = {
      id: 's-1',
      title: 'Older',
      transcript: [
        { kind: 'user', text: 'first', runId: 'r-1' },
        { kind: 'assistant', text: 'answer', runId: 'r-1' },
      ],
    };
    memory.set(CURRENT_SESSION_KEY, 's-1');
    await chat.restore();
    expect(server.calls.map((c) => [c.command, c.args])).toEqual([
      ['toolgate.listSessions', [{}]],
      ['toolgate.loadSession', [{ sessionId: 's-1' }]],
      // and what customizes the agent, for the `/` menu
      ['toolgate.customization', []],
    ]);
    const state = last();
    expect(state.title).toBe('Older');
    expect(state.sessions.map((s) => s.id)).toEqual(['s-2', 's-1']);
    expect(state.entries).toMatchObject([{ kind: 'user', text: 'first' }, { kind: 'assistant', text: 'answer' }]);

    memory.delete(CURRENT_SESSION_KEY);
    server.calls = [];
    await chat.restore();
    expect(server.calls[1]).toEqual({ command: 'toolgate.loadSession', args: [{ sessionId: 's-2' }] });
  });

  it('restores once the server is up and the view is there', async () => {
    const { controller, server } = setup();
    server.answers['toolgate.listSessions'] = { sessions: [] };
    controller.setServerState('idle');
    await flush();
    expect(server.calls.map((c) => c.command)).toEqual(['toolgate.listSessions', 'toolgate.customization']);
  });

  it('starts, switches, renames and deletes sessions', async () => {
    const { chat, server, memory, last } = setup();
    server.answers['toolgate.listSessions'] = SESSIONS;
    server.answers['toolgate.newSession'] = { sessionId: 's-3' };
    await chat.handle({ type: 'newSession' });
    expect(last()).toMatchObject({ sessionId: 's-3', entries: [] });
    expect(memory.get(CURRENT_SESSION_KEY)).toBe('s-3');

    server.answers['toolgate.loadSession'] = { id: 's-2', title: 'Fix add', transcript: [{ kind: 'user', text: 'x' }] };
    await chat.handle({ type: 'switchSession', sessionId: 's-2' });
    expect(last()).toMatchObject({ sessionId: 's-2', title: 'Fix add' });

    fake.inputAnswers = ['Better name'];
    await chat.handle({ type: 'renameSession' });
    expect(server.calls.find((c) => c.command === 'toolgate.renameSession')?.args).toEqual([{ sessionId: 's-2', title: 'Better name' }]);

    fake.messageAnswers = [undefined, 'Delete'];
    await chat.handle({ type: 'deleteSession' });
    expect(server.calls.some((c) => c.command === 'toolgate.deleteSession')).toBe(false);
    await chat.handle({ type: 'deleteSession' });
    expect(server.calls.find((c) => c.command === 'toolgate.deleteSession')?.args).toEqual([{ sessionId: 's-2' }]);
    expect(fake.messages.filter((m) => m.level === 'modal')).toHaveLength(2);
    expect(last()).toMatchObject({ sessionId: undefined, entries: [] });
    expect(memory.get(CURRENT_SESSION_KEY)).toBeUndefined();
  });

  it('shows an error when the server has no sessions, and still works as a chat', async () => {
    const { chat, server, last } = setup();
    server.failWith = new Error('unknown command toolgate.listSessions');
    await chat.restore();
    expect(last().error).toMatch(/Could not list the sessions/);
  });
});

describe('ChatController: a session changed elsewhere', () => {
  beforeEach(() => fake.reset());

  const FIRST = { id: 's-2', title: 'Fix add', transcript: [{ kind: 'user', text: 'fix add', runId: 'r-1' }] };
  const TERMINAL = {
    id: 's-2',
    title: 'Fix add',
    transcript: [
      { kind: 'user', text: 'fix add', runId: 'r-1' },
      { kind: 'user', text: 'from the terminal', runId: 'r-2' },
      { kind: 'assistant', text: 'done there', runId: 'r-2' },
    ],
  };

  async function shown() {
    const context = setup();
    context.server.answers['toolgate.listSessions'] = SESSIONS;
    context.server.answers['toolgate.loadSession'] = FIRST;
    context.memory.set(CURRENT_SESSION_KEY, 's-2');
    context.controller.setServerState('idle'); // the server is up: the view restores its session
    await flush();
    expect(texts(context.last())).toEqual(['fix add']);
    context.server.calls = [];
    context.server.answers['toolgate.loadSession'] = TERMINAL;
    return context;
  }

  const texts = (state: ChatState) => state.entries.map((e) => ('text' in e ? e.text : e.kind));

  it('draws the conversation on screen again at once when this window is idle', async () => {
    const { controller, server, last } = await shown();
    controller.handleSessionChanged({ sessionId: 's-2', deleted: false });
    await flush();
    expect(server.calls.map((c) => c.command).sort()).toEqual(['toolgate.listSessions', 'toolgate.loadSession']);
    expect(texts(last())).toEqual(['fix add', 'from the terminal', 'done there']);
  });

  it('only lists the sessions again when another one changed', async () => {
    const { controller, server, last } = await shown();
    controller.handleSessionChanged({ sessionId: 's-1', deleted: false });
    await flush();
    expect(server.calls.map((c) => c.command)).toEqual(['toolgate.listSessions']);
    expect(texts(last())).toEqual(['fix add']);
  });

  it('waits while a run of this window is under way, then loads once', async () => {
    const { controller, server, last } = await shown();
    controller.handleEvent({ type: 'run_started', runId: 'r-3', sessionId: 's-1', task: 'elsewhere' });
    controller.handleSessionChanged({ sessionId: 's-2', deleted: false });
    controller.handleSessionChanged({ sessionId: 's-2', deleted: false });
    await flush();
    expect(server.calls.filter((c) => c.command === 'toolgate.loadSession')).toEqual([]);
    controller.handleEvent({ type: 'run_finished', runId: 'r-3', sessionId: 's-1', status: 'completed' });
    await flush();
    expect(server.calls.filter((c) => c.command === 'toolgate.loadSession')).toHaveLength(1);
    expect(texts(last())).toEqual(['fix add', 'from the terminal', 'done there']);
  });

  it('does not draw a reload that a message sent meanwhile overtook, and loads after its run', async () => {
    const { controller, chat, server, last } = await shown();
    let answer: (value: unknown) => void = () => undefined;
    server.answers['toolgate.loadSession'] = () => new Promise((resolve) => (answer = resolve));
    server.answers['toolgate.ask'] = { runId: 'r-3', sessionId: 's-2' };
    controller.handleSessionChanged({ sessionId: 's-2', deleted: false });
    await flush();
    await chat.handle({ type: 'send', text: 'and now?' });
    controller.handleEvent({ type: 'run_started', runId: 'r-3', sessionId: 's-2', task: 'and now?' });
    answer(TERMINAL);
    await flush();
    expect(texts(last())).toEqual(['fix add', 'and now?']);
    server.answers['toolgate.loadSession'] = {
      ...TERMINAL,
      transcript: [...TERMINAL.transcript, { kind: 'user', text: 'and now?', runId: 'r-3' }],
    };
    controller.handleEvent({ type: 'run_finished', runId: 'r-3', sessionId: 's-2', status: 'completed' });
    await flush();
    expect(texts(last())).toEqual(['fix add', 'from the terminal', 'done there', 'and now?']);
  });

  it('says so when the conversation on screen was deleted elsewhere', async () => {
    const { controller, memory, last } = await shown();
    controller.handleSessionChanged({ sessionId: 's-2', deleted: true });
    await flush();
    expect(last()).toMatchObject({ sessionId: undefined, entries: [], error: 'This conversation was deleted outside this window.' });
    expect(memory.get(CURRENT_SESSION_KEY)).toBeUndefined();
  });
});

describe('messages from the webview', () => {
  it('accepts only well-formed messages', () => {
    expect(isFromWebview({ type: 'send', text: 'hi' })).toBe(true);
    expect(isFromWebview({ type: 'send', text: 3 })).toBe(false);
    expect(isFromWebview({ type: 'accept', proposalId: 'p', hunks: [0, 2] })).toBe(true);
    expect(isFromWebview({ type: 'accept', proposalId: 'p', hunks: ['0'] })).toBe(false);
    expect(isFromWebview({ type: 'runCommand', id: 'workbench.action.terminal.new' })).toBe(false);
    expect(isFromWebview(null)).toBe(false);
    expect(isFromWebview({ type: 'plan', text: 'publish' })).toBe(true);
    expect(isFromWebview({ type: 'scaffold', planId: 'p', stepId: 's' })).toBe(true);
    expect(isFromWebview({ type: 'scaffold', planId: 'p' })).toBe(false);
    expect(isFromWebview({ type: 'approvePlan', planId: 7 })).toBe(false);
    expect(isFromWebview({ type: 'undoRun', runId: 'r-1' })).toBe(true);
    expect(isFromWebview({ type: 'undoRun' })).toBe(false);
  });
});

const PLAN = {
  planId: 'p-7',
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
      scaffold: {
        command: 'toolgate.scaffoldTool',
        arguments: [{ name: 'docs_render', capability: 'docs.render', inputs: ['markdown'], outputs: ['html'] }],
      },
    },
  ],
};

describe('ChatController: plans', () => {
  beforeEach(() => fake.reset());

  it('asks for a plan and draws it once, though the server also sends it as a notification', async () => {
    const { chat, controller, server, last, posted } = setup();
    controller.setServerState('idle');
    server.answers['toolgate.plan'] = PLAN;
    controller.handlePlan(PLAN);
    await chat.handle({ type: 'plan', text: '  publish the README ' });
    expect(server.calls.filter((c) => c.command === 'toolgate.plan')).toEqual([
      { command: 'toolgate.plan', args: [{ task: 'publish the README' }] },
    ]);
    const plans = last().entries.filter((e) => e.kind === 'plan');
    expect(plans).toHaveLength(1);
    expect(last().error).toBeUndefined();
    expect(posted.some((m) => m.type === 'state' && m.state.status.state === 'planning')).toBe(true);
    expect(last().status.state).toBe('idle');
  });

  it('asks for a plan with the same context a message takes, unless the chip was removed', async () => {
    const { chat, controller, server } = setup();
    controller.setServerState('idle');
    fake.selection = {
      uri: 'file:///work/calc.py',
      text: 'return a - b',
      range: { start: { line: 1, character: 4 }, end: { line: 1, character: 16 } },
      empty: false,
    };
    server.answers['toolgate.plan'] = PLAN;
    chat.conversation.sessionId = 's-4';
    await chat.handle({ type: 'plan', text: 'document @selection' });
    await chat.handle({ type: 'plan', text: 'document calc.py', withPointing: false });
    expect(server.calls.filter((c) => c.command === 'toolgate.plan').map((c) => c.args)).toEqual([
      [{ task: 'document @selection', sessionId: 's-4', context: { uri: 'file:///work/calc.py', range: fake.selection.range, text: 'return a - b' } }],
      [{ task: 'document calc.py', sessionId: 's-4' }],
    ]);
  });

  it('scaffolds a gap with the arguments the server gave, then allows Approve, which runs the plan', async () => {
    const { chat, controller, server, last } = setup();
    controller.handlePlan(PLAN);
    server.answers['toolgate.scaffoldTool'] = {
      name: 'docs_render',
      files: ['file:///work/tools/docs_render/tool.yaml', 'file:///work/tools/docs_render/main.py'],
    };
    await chat.handle({ type: 'scaffold', planId: 'p-7', stepId: 'render' });
    expect(server.calls[0]).toEqual({
      command: 'toolgate.scaffoldTool',
      args: [{ name: 'docs_render', capability: 'docs.render', inputs: ['markdown'], outputs: ['html'], planId: 'p-7', stepId: 'render' }],
    });
    expect(fake.shown).toEqual(['file:///work/tools/docs_render/tool.yaml']);
    const card = last().entries.find((e) => e.kind === 'plan');
    expect(card?.kind === 'plan' && card.plan.steps[1].gap?.scaffolded).toBe('tools/docs_render');
    server.answers['toolgate.runPlan'] = { runId: 'w-1' };
    await chat.handle({ type: 'approvePlan', planId: 'p-7' });
    expect(server.calls[1]).toEqual({ command: 'toolgate.runPlan', args: [{ planId: 'p-7' }] });
    const approved = last().entries.find((e) => e.kind === 'plan');
    expect(approved?.kind === 'plan' && approved.plan).toMatchObject({ decision: 'approved', runId: 'w-1' });
    expect(approved?.kind === 'plan' && approved.plan.runStatus).toBeUndefined();
    // Decided: a second click is refused in the view, not sent.
    await chat.handle({ type: 'dropPlan', planId: 'p-7' });
    expect(last().error).toBe('this plan was approved already');
    expect(server.calls).toHaveLength(2);
  });

  it('says on the approved plan\'s card how its run ended, once it ends', async () => {
    const { chat, controller, server, last } = setup();
    controller.handlePlan({ ...PLAN, status: 'ready', gaps: [], steps: [PLAN.steps[0]] });
    controller.handlePlan({ ...PLAN, planId: 'p-8', status: 'ready', gaps: [], steps: [PLAN.steps[0]] });
    server.answers['toolgate.runPlan'] = { runId: 'w-1' };
    await chat.handle({ type: 'approvePlan', planId: 'p-7' });
    controller.handleEvent({ type: 'run_started', runId: 'w-1', task: 'publish' });
    controller.handleEvent({ type: 'run_finished', runId: 'w-1', status: 'failed', reason: 'step render failed' });
    const cards = () => last().entries.flatMap((e) => (e.kind === 'plan' ? [e.plan] : []));
    expect(cards()).toMatchObject([{ planId: 'p-7', runId: 'w-1', runStatus: 'failed' }, { planId: 'p-8' }]);
    expect(cards()[1].runStatus).toBeUndefined();
    // A run that ends before runPlan answers: the card learns its end from the run's line.
    controller.handleEvent({ type: 'run_finished', runId: 'w-2', status: 'cancelled' });
    server.answers['toolgate.runPlan'] = { runId: 'w-2' };
    await chat.handle({ type: 'approvePlan', planId: 'p-8' });
    expect(cards()[1]).toMatchObject({ decision: 'approved', runId: 'w-2', runStatus: 'cancelled' });
  });

  it('drops a plan without running anything', async () => {
    const { chat, controller, server, last } = setup();
    controller.handlePlan(PLAN);
    await chat.handle({ type: 'dropPlan', planId: 'p-7' });
    const card = last().entries.find((e) => e.kind === 'plan');
    expect(card?.kind === 'plan' && card.plan.decision).toBe('dropped');
    // The server only keeps the decision in the session: nothing runs.
    expect(server.calls).toEqual([{ command: 'toolgate.dropPlan', args: [{ planId: 'p-7' }] }]);
  });

  it('adopts the session that keeps a plan made before any message', async () => {
    const { chat, controller, last } = setup();
    controller.handlePlan({ ...PLAN, sessionId: 's-9' });
    expect(chat.conversation.sessionId).toBe('s-9');
    controller.handlePlan({ ...PLAN, planId: 'p-8', sessionId: 's-other' });
    expect(last().entries.filter((e) => e.kind === 'plan')).toHaveLength(1);
  });

  it('says so when the server refuses to run a plan, and leaves it undecided', async () => {
    const { chat, controller, server, last } = setup();
    controller.handlePlan({ ...PLAN, status: 'ready', gaps: [], steps: [PLAN.steps[0]] });
    server.failWith = new Error('a run is already active (r-1); cancel it or wait for it');
    await chat.handle({ type: 'approvePlan', planId: 'p-7' });
    expect(last().error).toBe('a run is already active (r-1); cancel it or wait for it');
    const card = last().entries.find((e) => e.kind === 'plan');
    expect(card?.kind === 'plan' && card.plan.decision).toBeUndefined();
  });
});

describe('ChatController: undo', () => {
  beforeEach(() => fake.reset());

  it('undoes a finished run from its button and says what it put back', async () => {
    const { chat, controller, last, undone, undoAnswers } = setup();
    controller.handleEvent({ type: 'run_started', runId: 'r-1', task: 'fix add' });
    controller.handleEvent({ type: 'run_finished', runId: 'r-1', status: 'completed', account: { files: [{ path: 'calc.py' }] } });
    undoAnswers.push({
      runId: 'r-1',
      files: [
        { path: 'calc.py', action: 'restore', reason: '' },
        { path: 'b.py', action: 'changed_since', reason: 'changed since the run' },
      ],
      commits: [],
      revert: null,
      dryRun: false,
      undoRunId: 'u-1',
    });
    await chat.handle({ type: 'undoRun', runId: 'r-1' });
    expect(undone).toEqual(['r-1']);
    const end = last().entries.find((e) => e.kind === 'run');
    expect(end).toMatchObject({ undo: 'undone', undoNote: expect.stringMatching(/^Undone at \d\d:\d\d: put back calc\.py\. Left alone \(changed since the run\): b\.py\.$/) });
  });

  it('shows the undo as a run of its own whose button undoes the undo', async () => {
    const { chat, controller, last, undone, undoAnswers } = setup();
    controller.handleEvent({ type: 'run_finished', runId: 'r-1', status: 'completed', account: { files: [{ path: 'calc.py' }] } });
    const restore = [{ path: 'calc.py', action: 'restore' as const, reason: '' }];
    undoAnswers.push({ runId: 'r-1', files: restore, commits: [], revert: null, dryRun: false, undoRunId: 'u-1' });
    await chat.handle({ type: 'undoRun', runId: 'r-1' });
    expect(last().entries.filter((e) => e.kind === 'run')).toMatchObject([
      { runId: 'r-1', undo: 'undone' },
      { runId: 'u-1', undo: 'available', undoes: 'r-1', files: ['calc.py'] },
    ]);
    undoAnswers.push({ runId: 'u-1', files: restore, commits: [], revert: null, dryRun: false, undoRunId: 'u-2' });
    await chat.handle({ type: 'undoRun', runId: 'u-1' });
    expect(undone).toEqual(['r-1', 'u-1']);
    // The run's changes are back: it can be undone again, and so can the redo.
    expect(last().entries.filter((e) => e.kind === 'run')).toMatchObject([
      { runId: 'r-1', undo: 'available' },
      { runId: 'u-1', undo: 'undone' },
      { runId: 'u-2', undo: 'available', undoes: 'u-1' },
    ]);
  });

  it('undoes the run again when a redo is undone', async () => {
    const { chat, controller, last, undoAnswers } = setup();
    controller.handleEvent({ type: 'run_finished', runId: 'r-1', status: 'completed', account: { files: [{ path: 'calc.py' }] } });
    const restore = [{ path: 'calc.py', action: 'restore' as const, reason: '' }];
    for (const [runId, undoRunId] of [['r-1', 'u-1'], ['u-1', 'u-2'], ['u-2', 'u-3']]) {
      undoAnswers.push({ runId, files: restore, commits: [], revert: null, dryRun: false, undoRunId });
      await chat.handle({ type: 'undoRun', runId });
    }
    // u-3 undid the redo u-2: the undo u-1 is in effect again, so the run is undone again.
    expect(last().entries.filter((e) => e.kind === 'run')).toMatchObject([
      { runId: 'r-1', undo: 'undone', undoNote: expect.stringMatching(/^Undone again at \d\d:\d\d\.$/) },
      { runId: 'u-1', undo: 'available', undoNote: expect.stringMatching(/^Its changes were brought back at \d\d:\d\d\.$/) },
      { runId: 'u-2', undo: 'undone' },
      { runId: 'u-3', undo: 'available', undoes: 'u-2' },
    ]);
  });

  it('shows an undo from the command palette at once, as one from the button', async () => {
    const { chat, controller, server, last } = setup();
    controller.currentSession = () => chat.conversation.sessionId;
    chat.conversation.load('s-3', [
      { kind: 'user', text: 'fix add', runId: 'r-1' },
      { kind: 'run', runId: 'r-1', status: 'completed', files: ['calc.py'], undo: 'available' },
    ]);
    const restore = [{ path: 'calc.py', action: 'restore' as const, reason: '' }];
    server.answers['toolgate.undoRun'] = { runId: 'r-1', files: restore, commits: [], revert: null, dryRun: false, undoRunId: 'u-1' };
    fake.messageAnswers = ['Undo'];
    // "Toolgate: Undo Last Run": the latest run, not named by the view.
    await undoRunAfterAsking(controller);
    expect(server.calls.at(-1)).toEqual({ command: 'toolgate.undoRun', args: [{ runId: 'r-1', sessionId: 's-3' }] });
    expect(last().entries.filter((e) => e.kind === 'run')).toMatchObject([
      { runId: 'r-1', undo: 'undone', undoNote: expect.stringMatching(/^Undone at \d\d:\d\d: put back calc\.py\.$/) },
      { runId: 'u-1', undo: 'available', undoes: 'r-1', files: ['calc.py'] },
    ]);
    // Undo Last Run again undoes the undo: the run's changes are back, and its button with them.
    server.answers['toolgate.undoRun'] = { runId: 'u-1', files: restore, commits: [], revert: null, dryRun: false, undoRunId: 'u-2' };
    fake.messageAnswers = ['Undo'];
    await undoRunAfterAsking(controller);
    expect(last().entries.filter((e) => e.kind === 'run')).toMatchObject([
      { runId: 'r-1', undo: 'available', undoNote: expect.stringMatching(/^Its changes were brought back at \d\d:\d\d\.$/) },
      { runId: 'u-1', undo: 'undone' },
      { runId: 'u-2', undo: 'available', undoes: 'u-1' },
    ]);
  });

  it('names runs by their time in the undo messages, never by their ids', async () => {
    const { controller, server } = setup();
    controller.handleEvent({ type: 'run_started', runId: 'r-7', task: 'fix add' });
    controller.handleEvent({ type: 'run_finished', runId: 'r-7', status: 'completed' });
    const restore = [{ path: 'calc.py', action: 'restore' as const, reason: '' }];
    server.answers['toolgate.undoRun'] = { runId: 'r-7', files: restore, commits: [], revert: null, dryRun: false, undoRunId: 'u-7' };
    fake.messageAnswers = ['Undo'];
    await undoRunAfterAsking(controller);
    const said = fake.messages.map((m) => m.message);
    expect(said).toEqual([
      expect.stringMatching(/^Toolgate: undo the run at \d\d:\d\d\? It will restore calc\.py\.$/),
      expect.stringMatching(/^Toolgate: undid the run at \d\d:\d\d\.$/),
    ]);
    // The undo is a run of its own, named as one; a run this window never saw start is "earlier".
    server.answers['toolgate.undoRun'] = { runId: 'u-7', files: [], commits: [], revert: null, dryRun: true };
    await undoRunAfterAsking(controller);
    expect(fake.messages.at(-1)?.message).toMatch(/^Toolgate: the undo at \d\d:\d\d has nothing left to undo\.$/);
    server.answers['toolgate.undoRun'] = { runId: 'r-0', files: [], commits: [], revert: null, dryRun: true };
    await undoRunAfterAsking(controller);
    expect(fake.messages.at(-1)?.message).toBe('Toolgate: an earlier run has nothing left to undo.');
    expect(fake.messages.map((m) => m.message).join(' ')).not.toMatch(/[ru]-\d/);
  });

  it('draws an undo from the button once, though the controller also reports it', async () => {
    const { chat, controller, server, last, undone } = setup({ undoThroughCommand: true });
    controller.currentSession = () => chat.conversation.sessionId;
    controller.handleEvent({ type: 'run_finished', runId: 'r-1', status: 'completed', account: { files: [{ path: 'calc.py' }] } });
    const restore = [{ path: 'calc.py', action: 'restore' as const, reason: '' }];
    server.answers['toolgate.undoRun'] = { runId: 'r-1', files: restore, commits: [], revert: null, dryRun: false, undoRunId: 'u-1' };
    fake.messageAnswers = ['Undo'];
    await chat.handle({ type: 'undoRun', runId: 'r-1' });
    expect(undone).toEqual(['r-1']);
    expect(last().entries.filter((e) => e.kind === 'run')).toMatchObject([
      { runId: 'r-1', undo: 'undone' },
      { runId: 'u-1', undo: 'available', undoes: 'r-1' },
    ]);
    expect(last().error).toBeUndefined();
  });

  it('leaves out an undo kept in another session, of a run not shown here', async () => {
    const { chat, last } = setup();
    chat.conversation.load('s-3', [{ kind: 'run', runId: 'r-1', status: 'completed', files: ['calc.py'], undo: 'available' }]);
    const restore = [{ path: 'old.py', action: 'restore' as const, reason: '' }];
    chat.onUndo({ runId: 'r-0', files: restore, commits: [], revert: null, dryRun: false, undoRunId: 'u-9' }, 's-other');
    expect(last().entries).toMatchObject([{ kind: 'run', runId: 'r-1', undo: 'available' }]);
    expect(last().entries).toHaveLength(1);
  });

  it('keeps the button when the person says no', async () => {
    const { chat, controller, last, undone } = setup();
    controller.handleEvent({ type: 'run_finished', runId: 'r-1', status: 'completed', account: { files: [{ path: 'calc.py' }] } });
    await chat.handle({ type: 'undoRun', runId: 'r-1' });
    expect(undone).toEqual(['r-1']);
    expect(last().entries.find((e) => e.kind === 'run')).toMatchObject({ undo: 'available' });
  });
});

const CUSTOMIZATION = {
  rules: [{ file: 'AGENTS.md', applies: 'always', source: 'workspace' }],
  skills: [],
  commands: [
    { name: 'fix-issue', description: 'Fix a numbered issue', argumentHint: 'NUMBER', file: '.claude/commands/fix-issue.md', source: 'workspace' },
    // A file may not take a view command's name (the server renames it); if it did, the view's own wins.
    { name: 'new', description: 'shadowed', file: 'x.md', source: 'workspace' },
  ],
  hooks: [],
  mcpServers: [],
  problems: [],
  notices: [],
};

describe('ChatController: slash commands and customization', () => {
  beforeEach(() => fake.reset());

  it('offers the view\'s own commands and then the project\'s prompt commands, read when the view opens', async () => {
    const { chat, server, last } = setup();
    expect(last().commands.map((c) => c.name)).toEqual(['new', 'undo', 'tests', 'review', 'commands']);
    server.answers['toolgate.listSessions'] = { sessions: [] };
    server.answers['toolgate.customization'] = CUSTOMIZATION;
    await chat.restore();
    expect(last().commands.map((c) => c.name)).toEqual(['new', 'undo', 'tests', 'review', 'commands', 'fix-issue']);
    expect(last().commands.at(-1)).toEqual({
      name: 'fix-issue',
      description: 'Fix a numbered issue',
      argumentHint: 'NUMBER',
      source: '.claude/commands/fix-issue.md',
    });
    // Opened again: read again (a prompt file may have been added meanwhile).
    server.calls = [];
    await chat.handle({ type: 'ready' });
    expect(server.calls.map((c) => c.command)).toEqual(['toolgate.customization']);
  });

  it('sends a prompt command as typed, so the server expands it, and the turn shows it', async () => {
    const { chat, server, last } = setup();
    server.answers['toolgate.ask'] = { runId: 'r-1', sessionId: 's-1' };
    await chat.handle({ type: 'send', text: '/fix-issue 42' });
    expect(server.calls[0]).toEqual({ command: 'toolgate.ask', args: [{ task: '/fix-issue 42', newSession: true }] });
    expect(last().entries).toMatchObject([{ kind: 'user', text: '/fix-issue 42' }]);
  });

  it('carries out the view\'s own commands without asking the model', async () => {
    const { chat, server, controller, last, undone, undoAnswers } = setup();
    server.answers['toolgate.newSession'] = { sessionId: 's-new' };
    server.answers['toolgate.listSessions'] = { sessions: [] };
    await chat.handle({ type: 'send', text: '/new' });
    expect(server.calls[0].command).toBe('toolgate.newSession');
    expect(last().sessionId).toBe('s-new');

    await chat.handle({ type: 'send', text: '/tests' });
    await chat.handle({ type: 'send', text: '/review' });
    expect(fake.commands.map((c) => c.id)).toEqual(['toolgate-vscode.runTests', 'toolgate-vscode.reviewChanges']);

    // /undo with nothing to undo says so; then it undoes the latest run that changed files.
    await chat.handle({ type: 'send', text: '/undo' });
    expect(last().error).toBe('no run of this conversation has changes to undo');
    controller.handleEvent({ type: 'run_finished', runId: 'r-1', sessionId: 's-new', status: 'completed', account: { files: [{ path: 'a.py' }] } });
    controller.handleEvent({ type: 'run_finished', runId: 'r-2', sessionId: 's-new', status: 'completed', account: { files: [{ path: 'b.py' }] } });
    undoAnswers.push(undefined);
    await chat.handle({ type: 'send', text: '/undo' });
    expect(undone).toEqual(['r-2']);

    server.answers['toolgate.customization'] = CUSTOMIZATION;
    await chat.handle({ type: 'send', text: '/commands' });
    expect(last().customization).toMatchObject({ open: true, loading: false, data: { rules: [{ file: 'AGENTS.md' }] } });
    expect(server.calls.some((c) => c.command === 'toolgate.ask')).toBe(false);
    expect(last().entries.some((e) => e.kind === 'user')).toBe(false);
  });

  it('opens, refreshes and closes the Customization panel; a failure shows in it', async () => {
    const { chat, server, last } = setup();
    server.answers['toolgate.customization'] = CUSTOMIZATION;
    await chat.handle({ type: 'toggleCustomization' });
    expect(last().customization).toMatchObject({ open: true, loading: false });
    expect(last().customization.data?.commands[0].name).toBe('fix-issue');
    server.failWith = new Error('configuration error: bad toml');
    await chat.handle({ type: 'refreshCustomization' });
    expect(last().customization.error).toBe('Could not read the customization: configuration error: bad toml');
    // What was read before stays, and so do the commands of the menu.
    expect(last().commands.map((c) => c.name)).toContain('fix-issue');
    server.failWith = undefined;
    server.calls = [];
    await chat.handle({ type: 'toggleCustomization' });
    expect(last().customization.open).toBe(false);
    expect(server.calls).toEqual([]);
    expect(isFromWebview({ type: 'toggleCustomization' })).toBe(true);
    expect(isFromWebview({ type: 'refreshCustomization' })).toBe(true);
  });

  it('draws the rules files of the turn from run_started and rules_used', async () => {
    const { chat, controller, server, last } = setup();
    server.answers['toolgate.ask'] = { runId: 'r-1', sessionId: 's-1' };
    await chat.handle({ type: 'send', text: 'fix add' });
    controller.handleEvent({ type: 'run_started', runId: 'r-1', sessionId: 's-1', task: 'fix add', rules: ['AGENTS.md'] });
    controller.handleEvent({ type: 'rules_used', runId: 'r-1', sessionId: 's-1', rules: ['src/AGENTS.md'] });
    expect(last().entries[0]).toMatchObject({ kind: 'user', rules: ['AGENTS.md', 'src/AGENTS.md'] });
  });
});

describe('ChatController: the card\'s hunks and code blocks', () => {
  beforeEach(() => fake.reset());

  it('decides one hunk through the diff editor\'s own hunk commands', async () => {
    const { chat } = setup();
    await chat.handle({ type: 'decideHunk', proposalId: 'p-1', hunk: 1, accept: false });
    await chat.handle({ type: 'decideHunk', proposalId: 'p-1', hunk: 0, accept: true });
    expect(fake.commands).toEqual([
      { id: 'toolgate-vscode.rejectHunk', args: ['p-1', 1] },
      { id: 'toolgate-vscode.acceptHunk', args: ['p-1', 0] },
    ]);
  });

  it('draws a hunk decided in the CodeLens on the card of its proposal', async () => {
    const { controller, store, last } = setup();
    controller.handleEvent({ type: 'run_started', runId: 'r-1', task: 'fix add' });
    await controller.handleProposal(makeProposal());
    store.decideHunk('p-1', 0, true);
    const card = last().entries.find((e) => e.kind === 'tool');
    expect(card?.kind === 'tool' && card.proposal?.hunks.map((h) => h.decision)).toEqual(['accepted', undefined]);
  });

  it('copies a code block to the clipboard', async () => {
    const { chat } = setup();
    await chat.handle({ type: 'copy', text: 'print(1)\n' });
    expect(fake.clipboard).toBe('print(1)\n');
    expect(isFromWebview({ type: 'copy', text: 'x' })).toBe(true);
    expect(isFromWebview({ type: 'copy' })).toBe(false);
    expect(isFromWebview({ type: 'decideHunk', proposalId: 'p', hunk: 1, accept: true })).toBe(true);
    expect(isFromWebview({ type: 'decideHunk', proposalId: 'p', hunk: '1', accept: true })).toBe(false);
  });
});
