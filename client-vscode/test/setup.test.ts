import fs from 'node:fs';
import path from 'node:path';
import { beforeEach, describe, expect, it, vi } from 'vitest';

vi.mock('../src/vscodeapi', () => import('./fakeapi'));

import { fake } from './fakeapi';
import { API_KEY_SECRET } from '../src/commands';
import {
  chatOpenCheck,
  formatSeconds,
  MODEL_READY,
  modelItems,
  SAMPLE_TASK,
  SetupCommand,
  setupHandlers,
  WALKTHROUGH,
  type EndpointReport,
} from '../src/setup';
import type { StreamingRunner } from '../src/serverEnv';
import { FakeServer, flush } from './helpers';

const manifest = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8'));

const LM_STUDIO = { name: 'LM Studio', baseUrl: 'http://127.0.0.1:1234/v1', models: ['qwen2.5-coder-7b', 'llama-3.1-8b'] };

function report(overrides: Partial<EndpointReport> = {}): EndpointReport {
  return {
    ok: true,
    baseUrl: LM_STUDIO.baseUrl,
    model: 'qwen2.5-coder-7b',
    models: LM_STUDIO.models,
    toolCalling: 'native',
    problem: null,
    fix: null,
    notes: [],
    summary: 'http://127.0.0.1:1234/v1: model qwen2.5-coder-7b answers; native tool calling works',
    ...overrides,
  };
}

function setup({ running = true, stream }: { running?: boolean; stream?: StreamingRunner } = {}) {
  const server = new FakeServer();
  server.running = running;
  const events: string[] = [];
  const asked: string[] = [];
  const secrets = new Map<string, string>();
  const lines: string[] = [];
  const reportText: string[] = [];
  const manager = {
    ensureRunning: async () => server.running,
    isRunning: () => server.running,
    execute: <T>(command: string, args: unknown[]) => server.execute<T>(command, args),
    restart: async () => void events.push('restart'),
    reinstall: async () => void events.push('reinstall'),
    pushConfiguration: async () => void events.push('push'),
    launch: { command: '/env/bin/python', args: ['-m', 'toolgate', 'lsp'], python: '/env/bin/python', origin: 'bundled' as const },
  };
  const handlers = setupHandlers({
    server: manager,
    serverProblem: () => 'Toolgate needs Python 3.10 or newer',
    ask: async (task) => void asked.push(task),
    secrets: { store: async (key, value) => void secrets.set(key, value) },
    serverOutput: { appendLine: (line) => lines.push(line), show: () => undefined },
    report: { clear: () => (reportText.length = 0), append: (text) => reportText.push(text), show: () => undefined },
    stream: stream ?? (async () => ({ code: 0, output: '' })),
  });
  return { server, handlers, events, asked, secrets, lines, reportText, manager };
}

beforeEach(() => fake.reset());

describe('the walkthrough in package.json', () => {
  it('has the steps, each with a command this extension declares', () => {
    const walkthrough = manifest.contributes.walkthroughs[0];
    expect(`toolgate.${manifest.name}#${walkthrough.id}`).toBe(WALKTHROUGH);
    const declared = new Set(manifest.contributes.commands.map((c: { command: string }) => c.command));
    for (const id of Object.values(SetupCommand)) {
      expect(declared.has(id)).toBe(true);
    }
    const steps = walkthrough.steps.map((step: { id: string }) => step.id);
    expect(steps).toEqual(['server', 'findModel', 'localModel', 'otherServer', 'testConnection', 'sampleTask']);
    for (const step of walkthrough.steps) {
      const linked = [...step.description.matchAll(/\(command:([\w.-]+)\)/g)].map((m) => m[1]);
      expect(linked.length).toBeGreaterThan(0);
      linked.forEach((id: string) => expect(declared.has(id)).toBe(true));
      expect(fs.existsSync(path.join(__dirname, '..', step.media.markdown))).toBe(true);
    }
    expect(walkthrough.steps[1].description).toMatch(/11434.*1234.*8080.*8000/s);
  });
});

describe('finding a model', () => {
  it('lists every model of every server found, then the embedded model and any URL', () => {
    const items = modelItems([LM_STUDIO, { name: 'Ollama', baseUrl: 'http://127.0.0.1:11434/v1', models: [] }]);
    expect(items.map((item) => item.label)).toEqual([
      'qwen2.5-coder-7b',
      'llama-3.1-8b',
      'Ollama: no model loaded',
      '$(package) The embedded local model',
      '$(globe) Another OpenAI-compatible server…',
    ]);
    expect(items[1].description).toBe('LM Studio · http://127.0.0.1:1234/v1');
  });

  it('sets the picked server and model in the user settings and tests them', async () => {
    const { server, handlers, events } = setup();
    server.answers['toolgate.findModelServers'] = [LM_STUDIO];
    server.answers['toolgate.checkEndpoint'] = report();
    fake.quickPickAnswer = (items) => items[0];
    await handlers[SetupCommand.findModels]();
    expect(fake.settings).toEqual({ baseUrl: LM_STUDIO.baseUrl, model: 'qwen2.5-coder-7b' });
    expect(events).toContain('push');
    expect(server.calls.map((call) => call.command)).toEqual(['toolgate.findModelServers', 'toolgate.checkEndpoint']);
    expect(server.calls[1].args).toEqual([{ baseUrl: LM_STUDIO.baseUrl, model: 'qwen2.5-coder-7b' }]);
    expect(fake.context.get(MODEL_READY)).toBe(true);
    expect(fake.messages[0].message).toBe(`Toolgate: ${report().summary}.`);
  });

  it('says which ports it asked when nothing answers', async () => {
    const { server, handlers } = setup();
    server.answers['toolgate.findModelServers'] = [];
    fake.quickPickAnswer = () => undefined;
    await handlers[SetupCommand.findModels]();
    expect(fake.quickPicks[0].items).toHaveLength(2);
  });

  it('says why when the server cannot start', async () => {
    const { handlers, server } = setup({ running: false });
    await handlers[SetupCommand.findModels]();
    expect(server.calls).toEqual([]);
    expect(fake.messages[0]).toMatchObject({ level: 'error', message: 'Toolgate: Toolgate needs Python 3.10 or newer', items: ['Check Setup'] });
  });
});

describe('any OpenAI-compatible server', () => {
  it('keeps the key in secret storage, lists the models and tests the one picked', async () => {
    const { server, handlers, secrets } = setup();
    fake.inputAnswers = ['https://models.example.com/v1', 'sk-secret'];
    server.answers['toolgate.checkEndpoint'] = report({ baseUrl: 'https://models.example.com/v1', models: ['big', 'small'] });
    fake.quickPickAnswer = (items) => items[1];
    await handlers[SetupCommand.configureEndpoint]();
    expect(secrets.get(API_KEY_SECRET)).toBe('sk-secret');
    expect(fake.inputBoxes[1].options.password).toBe(true);
    expect(fake.settings).toEqual({ baseUrl: 'https://models.example.com/v1', model: 'small' });
    expect(JSON.stringify(fake.settings)).not.toContain('sk-secret');
  });
});

describe('test connection', () => {
  it('says what is wrong and offers the ways out', async () => {
    const { server, handlers } = setup();
    server.answers['toolgate.checkEndpoint'] = report({
      ok: false,
      problem: 'cannot reach the model server at http://127.0.0.1:1234/v1: connection refused',
      fix: 'start the model server',
    });
    await handlers[SetupCommand.testConnection]();
    expect(fake.messages[0].message).toBe(
      'Toolgate: no working model yet: cannot reach the model server at http://127.0.0.1:1234/v1: connection refused. Fix: start the model server.',
    );
    expect(fake.messages[0].items).toEqual(['Find Model Servers', 'Get Started', 'Check Setup']);
    expect(fake.context.get(MODEL_READY)).toBe(false);
  });

  it('checks once when the chat view opens, quietly when the model works', async () => {
    const { server, handlers } = setup();
    server.answers['toolgate.checkEndpoint'] = report();
    const opened = chatOpenCheck(async () => handlers[SetupCommand.testConnection]({ quiet: true }));
    opened();
    opened();
    await flush();
    expect(server.calls).toHaveLength(1);
    expect(fake.messages).toEqual([]);
  });
});

describe('the embedded model', () => {
  it('runs `toolgate model install` with its steps and the time in the notification', async () => {
    const runs: string[][] = [];
    const stream: StreamingRunner = async (command, args, onLine) => {
      runs.push([command, ...args]);
      ['==> compiling the local model runtime', 'pip noise', '==> done in 600 s'].forEach(onLine);
      return { code: 0, output: '' };
    };
    const { server, handlers, events, lines } = setup({ stream });
    fake.settings = { baseUrl: 'http://elsewhere/v1', model: 'm' };
    server.answers['toolgate.checkEndpoint'] = report({ baseUrl: null, toolCalling: 'text' });
    await handlers[SetupCommand.installLocalModel]();
    expect(runs).toEqual([['/env/bin/python', '-m', 'toolgate', 'model', 'install']]);
    const progress = fake.progress.find((p) => p.title === 'Toolgate: installing the embedded model');
    expect(progress?.reports.map((r) => r.replace(/\(\d+ s\)/, '(N s)'))).toEqual([
      'compiling the local model runtime (N s)',
      'done in 600 s (N s)',
    ]);
    expect(lines).toContain('pip noise');
    expect(fake.settings).toEqual({});
    expect(events).toContain('restart');
    expect(fake.messages[0].message).toMatch(/^Toolgate: the embedded model is installed \(took \d+ s\)\.$/);
  });

  it('offers Retry when the install fails', async () => {
    const stream: StreamingRunner = async () => ({ code: 1, output: 'no compiler' });
    const { handlers } = setup({ stream });
    await handlers[SetupCommand.installLocalModel]();
    expect(fake.messages[0].items).toEqual(['Retry', 'Show Output']);
  });
});

describe('check setup and the sample task', () => {
  it("shows the doctor's report", async () => {
    const { server, handlers, reportText } = setup();
    server.answers['toolgate.doctor'] = { ok: false, text: 'toolgate 0.1.0 doctor — /work\n  fail  endpoint: …', checks: [] };
    await handlers[SetupCommand.checkSetup]();
    expect(reportText.join('')).toContain('fail  endpoint');
    expect(fake.messages[0].message).toBe('Toolgate: a run cannot start yet; the report says what to fix.');
  });

  it('offers the sample task to change, then asks', async () => {
    const { handlers, asked } = setup();
    fake.inputAnswers = [`${SAMPLE_TASK} In calc.py.`];
    await handlers[SetupCommand.sampleTask]();
    expect(fake.inputBoxes[0].options.value).toBe(SAMPLE_TASK);
    expect(asked).toEqual([`${SAMPLE_TASK} In calc.py.`]);
  });

  it('formats durations', () => {
    expect(formatSeconds(38.4)).toBe('38 s');
    expect(formatSeconds(252)).toBe('4 min 12 s');
  });
});
