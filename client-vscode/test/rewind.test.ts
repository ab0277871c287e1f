import { beforeEach, describe, expect, it, vi } from 'vitest';

vi.mock('../src/vscodeapi', () => import('./fakeapi'));

import { fake } from './fakeapi';
import { Controller } from '../src/controller';
import { ProposalStore } from '../src/proposals';
import { DiffReview } from '../src/review';
import { ChatController } from '../src/chat/chatController';
import { Conversation } from '../src/chat/conversation';
import type { ChatEntry, ChatState, ToWebview } from '../src/chat/messages';
import { REWIND_CHOICES, rewindNote } from '../src/chat/rewind';
import { decorateEntry, renderRewind, rewindAction } from '../src/webview/rewind';
import { renderEntry } from '../src/webview/render';
import type { RewindResult, TranscriptEntry } from '../src/protocol';
import { FakeServer } from './helpers';

function setup() {
  const store = new ProposalStore();
  const server = new FakeServer();
  const review = new DiffReview(store);
  const output = {
    text: '',
    info(t: string) { this.text += `${t}\n`; },
    warn(t: string) { this.text += `${t}\n`; },
    debug() {},
    show: vi.fn(),
  };
  const statusBar = { text: '', tooltip: undefined as unknown, show: vi.fn() };
  const controller = new Controller(store, server, review, output, statusBar, () => 'notify', () => [], async () => {});
  const memory = new Map<string, unknown>();
  const chat = new ChatController({
    controller,
    ensureServer: async () => true,
    openDiff: async () => undefined,
    undoRun: async () => undefined,
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
  return { server, chat, posted, last };
}

const TWO_TURNS: TranscriptEntry[] = [
  { kind: 'user', text: 'fix add', runId: 'r-1', turn: 1 },
  { kind: 'assistant', text: 'Fixed add.', runId: 'r-1' },
  { kind: 'run', runId: 'r-1', status: 'completed', files: ['calc.py'], undo: 'available' },
  { kind: 'user', text: 'now mul', runId: 'r-2', turn: 2 },
  { kind: 'assistant', text: 'Fixed mul.', runId: 'r-2' },
  { kind: 'run', runId: 'r-2', status: 'completed', files: ['calc.py'], undo: 'available' },
];

const REWOUND: TranscriptEntry[] = [
  ...TWO_TURNS.slice(0, 3),
  ...TWO_TURNS.slice(3).map((entry) => ({ ...entry, rewound: true })),
  {
    kind: 'rewind',
    rewindId: 'w-1',
    toTurn: 1,
    text: 'rewound to turn 1; turn 2 taken out of the conversation',
    undone: false,
  },
];

const DONE: RewindResult = {
  sessionId: 's-1',
  rewindId: 'w-1',
  toTurn: 1,
  what: 'both',
  turns: [2],
  runs: ['r-2'],
  undos: ['u-1'],
  leftAlone: [],
  revert: [],
  takenBack: false,
};

describe('rewinding from the chat view', () => {
  beforeEach(() => fake.reset());

  it('asks what to take back and rewinds to before the chosen turn, then draws the session as kept', async () => {
    const { server, chat, last } = setup();
    let kept = TWO_TURNS;
    server.answers['toolgate.loadSession'] = () => ({ id: 's-1', title: 'Fix', transcript: kept });
    server.answers['toolgate.listSessions'] = { sessions: [] };
    server.answers['toolgate.rewind'] = () => {
      kept = REWOUND;
      return DONE;
    };
    await chat.handle({ type: 'switchSession', sessionId: 's-1' });
    const second = last().entries.find((e) => e.kind === 'user' && e.text === 'now mul');
    fake.quickPickAnswer = (items) => (items as { what: string }[]).find((i) => i.what === 'code');
    await chat.handle({ type: 'rewind', key: second!.key });
    expect(fake.quickPicks[0].items).toHaveLength(REWIND_CHOICES.length);
    expect(server.calls.find((c) => c.command === 'toolgate.rewind')?.args).toEqual([{ turn: 1, what: 'code', sessionId: 's-1' }]);
    const state = last();
    expect(state.error).toBeUndefined();
    expect(state.entries.filter((e) => e.rewound).map((e) => e.kind)).toEqual(['user', 'assistant', 'run']);
    expect(state.entries.at(-1)).toMatchObject({ kind: 'rewind', rewindId: 'w-1', undone: false });
    expect(fake.statusMessages.at(-1)).toMatch(/Rewound to turn 1; the model no longer sees turn 2; put back the files of 1 run/);
  });

  it('does nothing when the person presses Escape', async () => {
    const { server, chat, last } = setup();
    server.answers['toolgate.loadSession'] = { id: 's-1', title: 'Fix', transcript: TWO_TURNS };
    server.answers['toolgate.listSessions'] = { sessions: [] };
    await chat.handle({ type: 'switchSession', sessionId: 's-1' });
    fake.quickPickAnswer = () => undefined;
    await chat.handle({ type: 'rewind', key: last().entries[0].key });
    expect(server.calls.some((c) => c.command === 'toolgate.rewind')).toBe(false);
  });

  it('learns the number of a turn sent from the view from the kept session', async () => {
    const { server, chat } = setup();
    chat.conversation.load('s-1', []);
    chat.conversation.addUser('fix add');
    chat.conversation.apply({ type: 'run_started', runId: 'r-1', sessionId: 's-1' });
    server.answers['toolgate.loadSession'] = { id: 's-1', title: 'Fix', transcript: TWO_TURNS };
    server.answers['toolgate.listSessions'] = { sessions: [] };
    server.answers['toolgate.rewind'] = { ...DONE, toTurn: 0, turns: [1, 2] };
    const key = chat.conversation.list()[0].key;
    await chat.handle({ type: 'rewind', key });
    expect(server.calls.find((c) => c.command === 'toolgate.rewind')?.args).toEqual([{ turn: 0, what: 'both', sessionId: 's-1' }]);
  });

  it('refuses a rewound turn and a turn not kept yet, in words', async () => {
    const { server, chat, last } = setup();
    server.answers['toolgate.loadSession'] = { id: 's-1', title: 'Fix', transcript: REWOUND };
    server.answers['toolgate.listSessions'] = { sessions: [] };
    await chat.handle({ type: 'switchSession', sessionId: 's-1' });
    const rewound = last().entries.find((e) => e.kind === 'user' && e.rewound);
    await chat.handle({ type: 'rewind', key: rewound!.key });
    expect(last().error).toBe('this turn was rewound already');
    chat.conversation.addUser('unsent yet');
    const fresh = chat.conversation.list().at(-1)!;
    await chat.handle({ type: 'rewind', key: fresh.key });
    expect(last().error).toMatch(/not been kept yet/);
  });

  it('takes a rewind back and draws the turns as seen again', async () => {
    const { server, chat, last } = setup();
    let kept: TranscriptEntry[] = REWOUND;
    server.answers['toolgate.loadSession'] = () => ({ id: 's-1', title: 'Fix', transcript: kept });
    server.answers['toolgate.listSessions'] = { sessions: [] };
    server.answers['toolgate.undoRewind'] = () => {
      kept = [...TWO_TURNS, { ...(REWOUND.at(-1) as object), undone: true } as TranscriptEntry];
      return { ...DONE, takenBack: true };
    };
    await chat.handle({ type: 'switchSession', sessionId: 's-1' });
    await chat.handle({ type: 'undoRewind', rewindId: 'w-1' });
    expect(server.calls.find((c) => c.command === 'toolgate.undoRewind')?.args).toEqual([{ rewindId: 'w-1', sessionId: 's-1' }]);
    const state = last();
    expect(state.entries.some((e) => e.rewound)).toBe(false);
    expect(state.entries.at(-1)).toMatchObject({ kind: 'rewind', undone: true });
    expect(fake.statusMessages.at(-1)).toMatch(/Took back the rewind to turn 1; the model sees turn 2 again/);
  });
});

describe('rewind in the markup', () => {
  const turn: ChatEntry = { kind: 'user', key: 'user-1', text: 'fix add', runId: 'r-1', turn: 1 };

  it('offers Rewind on a kept turn, not while running, not on a rewound or unsent one', () => {
    expect(rewindAction(turn, false)).toContain('data-action="rewind" data-key="user-1"');
    // An icon in the editor's look, its words for screen readers and on hover.
    expect(rewindAction(turn, false)).toMatch(/class="icon-button"[^>]*title="Rewind to before this turn[^"]*"[^>]*aria-label="Rewind…"/);
    expect(rewindAction(turn, true)).toBe('');
    expect(rewindAction({ ...turn, rewound: true }, false)).toBe('');
    expect(rewindAction({ ...turn, runId: 'unsent' }, false)).toBe('');
  });

  it('puts the action and the attachments inside the turn, and marks a rewound entry', () => {
    const html = decorateEntry(turn, renderEntry(turn), false);
    expect(html).toMatch(/^<div class="entry user"[\s\S]*data-action="rewind"[\s\S]*<\/div><\/div>$/);
    const answer: ChatEntry = { kind: 'assistant', key: 'a-1', text: 'done', rewound: true };
    expect(decorateEntry(answer, renderEntry(answer), false)).toMatch(/^<div title="Rewound[^"]*" class="rewound entry assistant"/);
  });

  it('draws a rewind with Take back until it is taken back', () => {
    const entry = { kind: 'rewind' as const, key: 'rewind-w-1', rewindId: 'w-1', toTurn: 1, text: 'rewound to turn 1', undone: false };
    expect(renderRewind(entry)).toContain('data-action="undoRewind" data-rewind="w-1"');
    expect(renderRewind(entry)).toContain('Rewound to turn 1.');
    expect(renderEntry(entry)).toBe(renderRewind(entry));
    expect(renderRewind({ ...entry, undone: true })).toContain('taken back');
    expect(renderRewind({ ...entry, settled: true })).not.toContain('data-action="undoRewind"');
  });

  it('offers Take back only until the conversation goes on', () => {
    const conversation = new Conversation();
    conversation.load('s-1', REWOUND);
    expect(conversation.list().at(-1)).toMatchObject({ kind: 'rewind' });
    expect(conversation.list().at(-1)).not.toHaveProperty('settled');
    conversation.addUser('next');
    expect(conversation.list().find((e) => e.kind === 'rewind')).toMatchObject({ settled: true });
  });

  it('says what was done, the files left alone included', () => {
    expect(rewindNote({ ...DONE, what: 'conversation', runs: [] })).toBe('Rewound to turn 1; the model no longer sees turn 2.');
    expect(rewindNote({ ...DONE, leftAlone: ['calc.py'] })).toMatch(/left alone, as you changed them since: calc.py\.$/);
  });
});

describe('a turn\'s attachments from the run\'s notice', () => {
  it('come back with the turn when the session is loaded', () => {
    const conversation = new Conversation();
    conversation.load('s-1', [
      { kind: 'user', text: 'explain @calc.py', runId: 'r-1', turn: 1, attached: [{ mention: '@calc.py', label: 'file, 2 lines' }], notAttached: ['@x: no such file'] },
    ]);
    expect(conversation.list()).toMatchObject([
      { kind: 'user', turn: 1, attached: [{ mention: '@calc.py', label: 'file, 2 lines' }], notAttached: ['@x: no such file'] },
    ]);
  });

  it('reach the turn when the notice comes before run_started, as the server sends them', () => {
    const conversation = new Conversation('s-1');
    conversation.addUser('explain @calc.py');
    const notice = { type: 'notice', runId: 'r-1', sessionId: 's-1', attached: [{ mention: '@calc.py', label: 'calc.py' }], notAttached: [] };
    conversation.apply(notice);
    conversation.apply({ type: 'run_started', runId: 'r-1', sessionId: 's-1', task: 'explain @calc.py' });
    expect(conversation.list()).toMatchObject([{ kind: 'user', runId: 'r-1', attached: [{ mention: '@calc.py' }] }]);
    // A run started elsewhere (no turn waiting here): its turn is drawn with run_started.
    conversation.apply({ ...notice, runId: 'r-2' });
    expect(conversation.list()).toHaveLength(1);
    conversation.apply({ type: 'run_started', runId: 'r-2', sessionId: 's-1', task: 'other' });
    expect(conversation.list()[1]).toMatchObject({ kind: 'user', text: 'other', attached: [{ mention: '@calc.py' }] });
  });

  it('go on the turn, not on a line of their own', () => {
    const conversation = new Conversation('s-1');
    conversation.addUser('explain @calc.py', 'calc.py:2');
    conversation.apply({ type: 'run_started', runId: 'r-1', sessionId: 's-1' });
    conversation.apply({
      type: 'notice',
      runId: 'r-1',
      sessionId: 's-1',
      message: 'attached: @calc.py (calc.py)',
      attached: [{ mention: '@calc.py', kind: 'file', label: 'calc.py', bytes: 40 }],
      notAttached: ['@nope.py: no such file'],
    });
    const entries = conversation.list();
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      kind: 'user',
      pointed: 'calc.py:2',
      attached: [{ mention: '@calc.py', label: 'calc.py' }],
      notAttached: ['@nope.py: no such file'],
    });
  });
});
