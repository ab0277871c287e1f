import fs from 'node:fs';
import path from 'node:path';
import { beforeEach, describe, expect, it, vi } from 'vitest';

vi.mock('../src/vscodeapi', () => import('./fakeapi'));

import { fake, uri } from './fakeapi';
import { API_KEY_SECRET, Command, commandHandlers, registerCommands } from '../src/commands';
import { Controller } from '../src/controller';
import { ProposalStore } from '../src/proposals';
import { CommandCancelled, ServerCommand } from '../src/protocol';
import { DiffReview } from '../src/review';
import { SetupCommand } from '../src/setup';
import { FakeServer, flush, makeProposal, type FakeToken } from './helpers';

const manifest = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8'));

function setup() {
  const store = new ProposalStore();
  const server = new FakeServer();
  const review = new DiffReview(store);
  const output = { info: vi.fn(), warn: vi.fn(), debug: vi.fn(), show: vi.fn() };
  const controller = new Controller(store, server, review, output, { text: '', show: vi.fn() }, () => 'notify', () => [], async () => {});
  const secrets = new Map<string, string>();
  const deps = {
    controller,
    review,
    secrets: {
      store: async (key: string, value: string) => void secrets.set(key, value),
      delete: async (key: string) => void secrets.delete(key),
    },
    output,
    onApiKeyChanged: vi.fn(async () => {}),
    restartServer: vi.fn(async () => {}),
    ensureServer: async () => server.running,
  };
  return { store, server, deps, secrets, handlers: commandHandlers(deps), output };
}

describe('command registration', () => {
  beforeEach(() => fake.reset());

  it('registers exactly the commands package.json contributes (with setup.ts), none of them a server id', () => {
    const { deps } = setup();
    registerCommands(deps);
    const contributed = manifest.contributes.commands.map((c: { command: string }) => c.command).sort();
    const setupIds = Object.values(SetupCommand);
    expect(setupIds.some((id) => fake.registered.has(id))).toBe(false);
    expect([...fake.registered.keys(), ...setupIds].sort()).toEqual(contributed);
    const serverIds = new Set<string>(Object.values(ServerCommand));
    for (const id of fake.registered.keys()) {
      expect(id.startsWith('toolgate-vscode.')).toBe(true);
      expect(serverIds.has(id)).toBe(false);
    }
  });
});

describe('commands', () => {
  beforeEach(() => fake.reset());

  it('Ask sends the task with the selection as context', async () => {
    const { handlers, server } = setup();
    fake.selection = {
      uri: 'file:///work/calc.py',
      text: 'return a - b',
      range: { start: { line: 1, character: 4 }, end: { line: 1, character: 16 } },
      empty: false,
    };
    fake.inputAnswers = ['  fix this  '];
    await handlers[Command.ask]();
    expect(server.calls).toEqual([
      {
        command: 'toolgate.ask',
        args: [{ task: 'fix this', context: { uri: 'file:///work/calc.py', range: fake.selection.range, text: 'return a - b' } }],
      },
    ]);
    expect(fake.inputBoxes[0].options.prompt).toContain('selected text');
  });

  it('Ask with an empty selection sends only the file, and nothing when the box is dismissed', async () => {
    const { handlers, server } = setup();
    fake.selection = { uri: 'file:///work/calc.py', text: '', range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } }, empty: true };
    fake.inputAnswers = ['explain', undefined];
    await handlers[Command.ask]();
    await handlers[Command.ask]();
    expect(server.calls).toEqual([{ command: 'toolgate.ask', args: [{ task: 'explain', context: { uri: 'file:///work/calc.py' } }] }]);
  });

  it('Edit Selection asks for the instruction and sends the file, the lines and it', async () => {
    const { handlers, server } = setup();
    const range = { start: { line: 4, character: 0 }, end: { line: 6, character: 0 } };
    fake.selection = { uri: 'file:///work/calc.py', text: 'def mul', range, empty: false };
    fake.inputAnswers = ['  make it multiply ', 'tidy', undefined];
    await handlers[Command.editSelection]();
    // From the server's code action: its file and lines, not the editor's selection.
    const other = { start: { line: 0, character: 0 }, end: { line: 1, character: 0 } };
    await handlers[Command.editSelection]({ uri: 'file:///work/b.py', range: other });
    await handlers[Command.editSelection](); // Escape in the box: nothing is sent
    expect(server.calls).toEqual([
      { command: 'toolgate.editSelection', args: [{ uri: 'file:///work/calc.py', range, instruction: 'make it multiply' }] },
      { command: 'toolgate.editSelection', args: [{ uri: 'file:///work/b.py', range: other, instruction: 'tidy' }] },
    ]);
    expect(fake.inputBoxes).toHaveLength(3);
  });

  it('Edit Selection without a selection says to select first and asks nothing', async () => {
    const { handlers, server } = setup();
    fake.selection = { uri: 'file:///work/calc.py', text: '', range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } }, empty: true };
    await handlers[Command.editSelection]();
    expect(server.calls).toEqual([]);
    expect(fake.inputBoxes).toEqual([]);
    expect(fake.messages[0].message).toContain('select the lines');
  });

  it('Accept from the diff\'s title bar accepts the proposal shown there', async () => {
    const { handlers, server, store } = setup();
    store.upsert(makeProposal({ id: 'a' }));
    store.upsert(makeProposal({ id: 'b', uri: 'file:///work/b.py' }));
    await handlers[Command.acceptProposal](uri('toolgate-proposal', '/work/b.py', 'id=b'));
    expect(server.calls).toEqual([{ command: 'toolgate.acceptProposal', args: ['b'] }]);
  });

  it('Accept without an argument asks which proposal when several wait', async () => {
    const { handlers, server, store } = setup();
    store.upsert(makeProposal({ id: 'a' }));
    store.upsert(makeProposal({ id: 'b', uri: 'file:///work/b.py' }));
    fake.quickPickAnswer = (items) => items[1];
    await handlers[Command.acceptProposal]();
    expect(fake.quickPicks[0].items).toHaveLength(2);
    expect(server.calls).toEqual([{ command: 'toolgate.acceptProposal', args: ['b'] }]);
  });

  it('Reject sends the reason; Escape in the reason box sends nothing', async () => {
    const { handlers, server, store } = setup();
    store.upsert(makeProposal());
    fake.inputAnswers = ['use a * b', undefined, ''];
    await handlers[Command.rejectProposal]('p-1');
    await handlers[Command.rejectProposal]('p-1');
    await handlers[Command.rejectProposal]('p-1');
    expect(server.calls).toEqual([
      { command: 'toolgate.rejectProposal', args: ['p-1', 'use a * b'] },
      { command: 'toolgate.rejectProposal', args: ['p-1'] },
    ]);
    expect(fake.inputBoxes[0].options.title).toBe('Reject write_file: calc.py');
  });

  it('says so when nothing is pending', async () => {
    const { handlers, server } = setup();
    await handlers[Command.acceptProposal]();
    expect(server.calls).toEqual([]);
    expect(fake.messages[0].message).toContain('no proposal is waiting');
  });

  it('Show Pending syncs with the server and opens the picked diff', async () => {
    const { handlers, server } = setup();
    server.answers[ServerCommand.listProposals] = [makeProposal({ id: 'x' })];
    await handlers[Command.showPending]();
    expect(server.calls[0].command).toBe('toolgate.listProposals');
    expect((fake.quickPicks[0].items[0] as { label: string }).label).toBe('write_file: calc.py');
    expect(fake.commands.some((c) => c.id === 'vscode.diff')).toBe(true);
  });

  it('Stop cancels the active run', async () => {
    const { handlers, server, deps } = setup();
    deps.controller.handleEvent({ type: 'run_started', runId: 'r-3', task: 't' });
    server.answers[ServerCommand.cancel] = { cancelled: true };
    await handlers[Command.stop]();
    expect(server.calls.at(-1)).toEqual({ command: 'toolgate.cancel', args: ['r-3'] });
  });

  it('Undo Last Run shows what it would restore, asks, then undoes that run', async () => {
    const { handlers, server } = setup();
    const files = [
      { path: 'a.py', action: 'restore', reason: 'changed by the run' },
      { path: 'new.py', action: 'remove', reason: 'created by the run' },
      { path: 'b.py', action: 'changed_since', reason: 'changed since the run; left alone' },
    ];
    server.answers[ServerCommand.undoRun] = { runId: 'r-7', files, commits: [], revert: null, dryRun: true };
    fake.messageAnswers = ['Undo'];
    await handlers[Command.undoRun]();
    expect(server.calls).toEqual([
      { command: 'toolgate.undoRun', args: [{ runId: undefined, dryRun: true }] },
      { command: 'toolgate.undoRun', args: [{ runId: 'r-7' }] },
    ]);
    expect(fake.messages[0].message).toContain('restore a.py, remove new.py');
    expect(fake.messages.at(-1)).toMatchObject({ level: 'warning' });
    expect(fake.messages.at(-1)?.message).toContain('Left alone (changed since the run): b.py');
  });

  it('Undo Last Run changes nothing when the person does not confirm', async () => {
    const { handlers, server } = setup();
    server.answers[ServerCommand.undoRun] = {
      runId: 'r-8',
      files: [{ path: 'a.py', action: 'restore', reason: '' }],
      commits: [],
      revert: null,
      dryRun: true,
    };
    fake.messageAnswers = [];
    await handlers[Command.undoRun]();
    expect(server.calls).toHaveLength(1);
  });

  it('Review Changes offers the working tree, the staged changes and each pending proposal', async () => {
    const { handlers, server, store } = setup();
    store.upsert(makeProposal());
    server.answers[ServerCommand.review] = {
      approved: false,
      comments: [{ path: 'calc.py', line: 2, severity: 'error', message: 'subtracts', suggestion: null }],
      summary: 'not approved: 1 error',
      diagnostics: 1,
    };
    fake.quickPickAnswer = (items) => items[1];
    fake.messageAnswers = ['Show Problems'];
    await handlers[Command.reviewChanges]();
    const labels = (fake.quickPicks[0].items as { label: string }[]).map((item) => item.label);
    expect(labels).toEqual(['Working tree', 'Staged', 'Proposed write_file: calc.py']);
    expect(server.calls).toEqual([{ command: 'toolgate.review', args: [{ staged: true }] }]);
    expect(fake.progress[0].title).toBe('Toolgate: the model is reviewing the staged changes…');
    expect(fake.messages).toEqual([
      { level: 'warning', message: 'Toolgate review of the staged changes: not approved: 1 error', items: ['Show Problems'] },
    ]);
    expect(fake.commands.at(-1)?.id).toBe('workbench.panel.markers.view.focus');
  });

  it('Review Changes on a proposal reviews it without asking, and an approval needs no Problems', async () => {
    const { handlers, server, store } = setup();
    store.upsert(makeProposal());
    server.answers[ServerCommand.review] = { approved: true, comments: [], summary: 'approved: no comments' };
    await handlers[Command.reviewChanges]('p-1');
    expect(fake.quickPicks).toEqual([]);
    expect(server.calls).toEqual([{ command: 'toolgate.review', args: [{ proposalId: 'p-1' }] }]);
    expect(fake.messages).toEqual([
      { level: 'info', message: 'Toolgate review of the proposed write_file on calc.py: approved: no comments', items: [] },
    ]);
  });

  it('Review Changes says which comments did not reach Problems, and nothing is sent when the pick is dismissed', async () => {
    const { handlers, server } = setup();
    server.answers[ServerCommand.review] = {
      approved: true,
      comments: [
        { path: 'calc.py', line: 2, severity: 'hint', message: 'name it' },
        { path: '../elsewhere.py', line: 1, severity: 'info', message: 'outside' },
      ],
      summary: 'approved: 1 info, 1 hint',
      diagnostics: 1,
    };
    await handlers[Command.reviewChanges]();
    expect(server.calls).toEqual([{ command: 'toolgate.review', args: [{}] }]);
    expect(fake.messages[0]).toMatchObject({
      level: 'info',
      message: 'Toolgate review of the working tree: approved: 1 info, 1 hint (1 on files outside the workspace, in the transcript)',
    });
    fake.quickPickAnswer = () => undefined;
    server.calls = [];
    await handlers[Command.reviewChanges]();
    expect(server.calls).toEqual([]);
  });

  it('Review Changes and Run Tests can be cancelled: the request is withdrawn and no error is shown', async () => {
    const { handlers, server } = setup();
    const withdrawn: string[] = [];
    // As the language client does: the request rejects once its token is cancelled.
    const answerOnlyIfKept = (command: string) => (token?: FakeToken) =>
      new Promise((_resolve, reject) => {
        expect(token?.isCancellationRequested).toBe(false);
        token?.onCancellationRequested(() => {
          withdrawn.push(command);
          reject(new CommandCancelled(command));
        });
      });
    server.answers[ServerCommand.review] = answerOnlyIfKept(ServerCommand.review);
    server.answers[ServerCommand.runTests] = answerOnlyIfKept(ServerCommand.runTests);

    const reviewing = handlers[Command.reviewChanges]();
    await flush();
    expect(fake.progress[0]).toMatchObject({ title: 'Toolgate: the model is reviewing the working tree…', done: false });
    fake.progress[0].cancel();
    await reviewing;
    const testing = handlers[Command.runTests]();
    await flush();
    fake.progress[1].cancel();
    await testing;

    expect(withdrawn).toEqual([ServerCommand.review, ServerCommand.runTests]);
    expect(fake.progress.map((p) => p.done)).toEqual([true, true]);
    expect(fake.messages).toEqual([]);
    expect(fake.statusMessages).toEqual(['Toolgate: cancelled', 'Toolgate: cancelled']);
  });

  it('Ask Agent with Review starts the review loop in the current session', async () => {
    const { handlers, server, deps } = setup();
    deps.controller.currentSession = () => 's-1';
    server.answers[ServerCommand.reviewLoop] = { loopId: 'loop-1' };
    fake.inputAnswers = ['  add half()  ', '   '];
    await handlers[Command.askWithReview]();
    await handlers[Command.askWithReview]();
    expect(server.calls).toEqual([{ command: 'toolgate.reviewLoop', args: [{ task: 'add half()', sessionId: 's-1' }] }]);
  });

  it('Run Tests shows the summary and offers the Problems panel on failures', async () => {
    const { handlers, server } = setup();
    server.answers[ServerCommand.runTests] = {
      summary: { total: 3, passed: 2, failed: 1, skipped: 0, errors: 0, duration_seconds: 0.2 },
      failures: [],
    };
    fake.messageAnswers = ['Show Problems'];
    await handlers[Command.runTests]();
    expect(server.calls).toEqual([{ command: 'toolgate.runTests', args: [{}] }]);
    expect(fake.messages[0]).toMatchObject({ level: 'warning', message: 'Toolgate tests: 2 passed, 1 failed, 0 errors, 0 skipped' });
    expect(fake.commands.at(-1)?.id).toBe('workbench.panel.markers.view.focus');
  });

  it('Run Tests waits for its failures to reach Problems before it says the counts', async () => {
    const { handlers, server } = setup();
    server.answers[ServerCommand.runTests] = {
      summary: { total: 2, passed: 1, failed: 1, skipped: 0, errors: 0, duration_seconds: 0.2 },
      failures: [{ file: 'test_calc.py', line: 9, test_id: 'test_calc.py::test_mul' }],
    };
    // The diagnostics arrive a moment after the command's answer, as notifications do.
    setTimeout(() => fake.diagnostics.set('file:///work/test_calc.py', [{ source: 'toolgate', message: 'assert 5 == 6' }]), 150);
    await handlers[Command.runTests]();
    expect(fake.messages[0].message).toBe('Toolgate tests: 1 passed, 1 failed, 0 errors, 0 skipped');
  });

  it('Run Tests names the failing files that never reached Problems', async () => {
    const { server, deps } = setup();
    server.answers[ServerCommand.runTests] = {
      summary: { total: 3, passed: 1, failed: 2, skipped: 0, errors: 0, duration_seconds: 0.2 },
      failures: [{ file: 'tests/test_a.py' }, { file: '/elsewhere/test_b.py' }, { file: 'tests/test_a.py' }],
    };
    // Another server's diagnostic does not count: only Toolgate's own.
    fake.diagnostics.set('file:///elsewhere/test_b.py', [{ source: 'toolgate', message: 'x' }]);
    fake.diagnostics.set('file:///work/tests/test_a.py', [{ source: 'pylint', message: 'y' }]);
    await commandHandlers({ ...deps, problemsWaitMs: 200 })[Command.runTests]();
    expect(fake.messages[0].message).toBe(
      'Toolgate tests: 1 passed, 2 failed, 0 errors, 0 skipped. Problems shows no failure for tests/test_a.py (toolgate.trace.server: verbose shows what the server published)',
    );
  });

  it('Run Tests says what happened when the tests did not run, never a pass', async () => {
    const { handlers, server } = setup();
    server.answers[ServerCommand.runTests] = {
      summary: { total: 0, passed: 0, failed: 0, skipped: 0, errors: 0, duration_seconds: 0.1 },
      failures: [],
      exitCode: 5,
      notRun: 'no test was collected (pytest looked in . for files named test_*.py or *_test.py)',
    };
    await handlers[Command.runTests]();
    expect(fake.messages).toHaveLength(1);
    expect(fake.messages[0]).toMatchObject({
      level: 'warning',
      message: 'Toolgate tests did not run: no test was collected (pytest looked in . for files named test_*.py or *_test.py)',
    });
  });

  it('Set API Key stores the key in SecretStorage and tells the server; empty removes it', async () => {
    const { handlers, secrets, deps } = setup();
    fake.inputAnswers = ['sk-new-key-123456', ''];
    await handlers[Command.setApiKey]();
    expect(secrets.get(API_KEY_SECRET)).toBe('sk-new-key-123456');
    expect(fake.inputBoxes[0].options.password).toBe(true);
    expect(deps.onApiKeyChanged).toHaveBeenCalledTimes(1);
    await handlers[Command.setApiKey]();
    expect(secrets.has(API_KEY_SECRET)).toBe(false);
    expect(fake.messages.map((m) => m.message)).not.toContain('sk-new-key-123456');
  });

  it('waits for a server that is still starting, then runs the command', async () => {
    const { handlers, server, deps } = setup();
    let started = false;
    deps.ensureServer = () =>
      new Promise<boolean>((resolve) =>
        setTimeout(() => {
          started = true;
          resolve(true);
        }, 30),
      );
    const commands = commandHandlers(deps);
    fake.inputAnswers = ['explain'];
    await commands[Command.ask]();
    expect(started).toBe(true);
    expect(server.calls.map((c) => c.command)).toEqual(['toolgate.ask']);
    expect(fake.messages).toEqual([]);
    void handlers;
  });

  it('offers a restart when the server is not running', async () => {
    const { handlers, server, deps } = setup();
    server.running = false;
    fake.messageAnswers = ['Restart Server'];
    await handlers[Command.ask]();
    expect(fake.messages[0]).toMatchObject({ level: 'error', message: 'Toolgate: the server did not start (see the output channel "Toolgate Server").' });
    expect(deps.restartServer).toHaveBeenCalled();
    expect(server.calls).toEqual([]);
  });

  it('shows a server error as a message instead of throwing', async () => {
    const { handlers, server } = setup();
    server.failWith = new Error('a run is already active');
    fake.inputAnswers = ['again'];
    await handlers[Command.ask]();
    expect(fake.messages[0]).toMatchObject({ level: 'error', message: 'Toolgate: a run is already active' });
  });
});

describe('package.json', () => {
  it('declares limited support for untrusted workspaces and restricts the interpreter settings', () => {
    expect(manifest.capabilities.untrustedWorkspaces.supported).toBe('limited');
    expect(manifest.capabilities.untrustedWorkspaces.restrictedConfigurations).toEqual(
      expect.arrayContaining(['toolgate.pythonPath', 'toolgate.serverCommand']),
    );
  });

  it('shows Accept and Reject in the editor title only on proposal diffs', () => {
    const title = manifest.contributes.menus['editor/title'];
    expect(title.map((m: { command: string }) => m.command)).toEqual([
      Command.acceptProposal,
      Command.rejectProposal,
      Command.reviewChanges,
    ]);
    for (const item of title) {
      expect(item.when).toBe('toolgate-vscode.proposalInView');
    }
  });

  it('has every setting the issue names, and no setting for the API key', () => {
    const keys = Object.keys(manifest.contributes.configuration.properties);
    for (const key of [
      'toolgate.model',
      'toolgate.baseUrl',
      'toolgate.toolCalling.mode',
      'toolgate.approval',
      'toolgate.limits.maxSteps',
      'toolgate.review.confirmInEditor',
      'toolgate.pythonPath',
      'toolgate.serverCommand',
    ]) {
      expect(keys).toContain(key);
    }
    expect(keys.some((key) => /key|secret|token/i.test(key))).toBe(false);
  });

  it('targets a VS Code no newer than the API types it is compiled against', () => {
    const engine = manifest.engines.vscode.replace(/^[^\d]*/, '');
    const types = manifest.devDependencies['@types/vscode'].replace(/^[^\d]*/, '');
    expect(engine.split('.').slice(0, 2)).toEqual(types.split('.').slice(0, 2));
  });
});
