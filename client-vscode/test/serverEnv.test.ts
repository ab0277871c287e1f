import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

vi.mock('../src/vscodeapi', () => import('./fakeapi'));

import { fake } from './fakeapi';
import { BundledServer } from '../src/bundledServer';
import type { ProcessRunner } from '../src/python';
import {
  bundledWheel,
  findBaseInterpreter,
  HOW_TO_POINT,
  InstallFailed,
  MARKER,
  progressLine,
  ServerEnvironment,
  type StreamingRunner,
} from '../src/serverEnv';

let tmp: string;

beforeEach(() => {
  fake.reset();
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'toolgate-env-'));
});
afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** Interpreters by name and the version each reports; a missing name cannot run. */
function versions(table: Record<string, string>): ProcessRunner {
  return async (command) => {
    if (!(command in table)) {
      throw Object.assign(new Error(`spawn ${command} ENOENT`), { code: 'ENOENT' });
    }
    return { code: 0, stdout: `${table[command]}\n/usr/bin/${path.basename(command)}\n`, stderr: '' };
  };
}

/** Runs `python -m venv DIR` by making DIR/bin/python, and pip by recording it; `pipFails` fails pip. */
function fakeStream(record: string[][], { pipFails = false } = {}): StreamingRunner {
  return async (command, args, onLine) => {
    record.push([command, ...args]);
    if (args[0] === '-m' && args[1] === 'venv') {
      fs.mkdirSync(path.join(args[2], 'bin'), { recursive: true });
      fs.writeFileSync(path.join(args[2], 'bin', 'python'), '');
      return { code: 0, output: '' };
    }
    const lines = pipFails
      ? ['Collecting pygls>=2.1', 'ERROR: Could not find a version that satisfies the requirement pygls>=2.1']
      : ['Processing ./toolgate-0.1.0-py3-none-any.whl', 'Collecting pygls>=2.1', 'Installing collected packages: pygls, toolgate', 'Successfully installed pygls-2.1 toolgate-0.1.0'];
    lines.forEach(onLine);
    return { code: pipFails ? 1 : 0, output: lines.join('\n') };
  };
}

function wheel(content = 'wheel v1'): string {
  const folder = path.join(tmp, 'ext', 'server');
  fs.mkdirSync(folder, { recursive: true });
  const file = path.join(folder, 'toolgate-0.1.0-py3-none-any.whl');
  fs.writeFileSync(file, content);
  return file;
}

describe('the bundled wheel', () => {
  it('is found by the extension version only', () => {
    const file = wheel();
    expect(bundledWheel(path.dirname(file), '0.1.0')).toBe(file);
    expect(bundledWheel(path.dirname(file), '0.2.0')).toBeUndefined();
    expect(bundledWheel(path.join(tmp, 'nowhere'), '0.1.0')).toBeUndefined();
  });
});

describe('pip progress', () => {
  it('shows what is fetched and installed, skips the rest', () => {
    expect(progressLine('Collecting openai>=1.40')).toBe('fetching openai>=1.40');
    expect(progressLine('  Downloading pygls-2.1.0-py3-none-any.whl (120 kB)')).toBe('fetching pygls');
    expect(progressLine('Installing collected packages: a, b')).toBe('installing the packages');
    expect(progressLine('  Preparing metadata (pyproject.toml): started')).toBeUndefined();
  });
});

describe('the base interpreter', () => {
  it("takes the Python extension's when it is new enough, else python3", async () => {
    const run = versions({ '/ext/python': '3.12.1', python3: '3.11.7' });
    expect(await findBaseInterpreter(async () => '/ext/python', run)).toEqual({ ok: true, python: '/usr/bin/python', version: '3.12.1' });
    const old = versions({ '/ext/python': '3.9.18', python3: '3.11.7' });
    // The interpreter's own file, as it reports it: the environment is made with that one.
    expect(await findBaseInterpreter(async () => '/ext/python', old)).toEqual({ ok: true, python: '/usr/bin/python3', version: '3.11.7' });
  });

  it('says in one message what was found, which versions work and how to point at one', async () => {
    const found = await findBaseInterpreter(async () => '/ext/python', versions({ '/ext/python': '3.8.10', python3: '3.9.2' }));
    expect(found.ok).toBe(false);
    const message = (found as { message: string }).message;
    expect(message).toContain('Toolgate needs Python 3.10 or newer');
    expect(message).toContain('/ext/python is 3.8.10, python3 is 3.9.2');
    expect(message).toContain(HOW_TO_POINT);
    const none = await findBaseInterpreter(async () => undefined, versions({}));
    expect((none as { message: string }).message).toContain('found no Python (python3 is not on PATH)');
  });
});

describe('the environment', () => {
  it('is made once, then reused until another wheel comes', async () => {
    const record: string[][] = [];
    const file = wheel();
    const env = new ServerEnvironment({ storageDir: tmp, wheel: file, stream: fakeStream(record), log: () => undefined });
    expect(env.isCurrent()).toBe(false);
    const reports: string[] = [];
    await env.install('python3', (message) => reports.push(message));
    expect(record).toEqual([
      ['python3', '-m', 'venv', env.dir],
      [env.python, '-m', 'pip', 'install', file],
    ]);
    expect(reports).toContain('creating a virtual environment');
    expect(reports).toContain('fetching pygls>=2.1');
    expect(env.isCurrent()).toBe(true);
    expect(JSON.parse(fs.readFileSync(path.join(env.dir, MARKER), 'utf8')).wheel).toBe('toolgate-0.1.0-py3-none-any.whl');

    // A newer extension: same version number, other bytes. The old server is replaced in place.
    fs.writeFileSync(file, 'wheel v2');
    const again = new ServerEnvironment({ storageDir: tmp, wheel: file, stream: fakeStream(record), log: () => undefined });
    expect(again.isCurrent()).toBe(false);
    record.length = 0;
    await again.install('python3', () => undefined);
    expect(record).toEqual([
      [env.python, '-m', 'pip', 'install', '--force-reinstall', '--no-deps', file],
      [env.python, '-m', 'pip', 'install', file],
    ]);
    expect(again.isCurrent()).toBe(true);
  });

  it('keeps no marker when pip fails, so the next start installs again', async () => {
    const env = new ServerEnvironment({ storageDir: tmp, wheel: wheel(), stream: fakeStream([], { pipFails: true }), log: () => undefined });
    const failure = await env.install('python3', () => undefined).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(InstallFailed);
    expect((failure as InstallFailed).message).toBe('installing the server failed (exit status 1)');
    expect((failure as InstallFailed).output).toContain('Could not find a version that satisfies');
    expect(fs.existsSync(path.join(env.dir, MARKER))).toBe(false);
    expect(env.isCurrent()).toBe(false);
  });
});

describe('the bundled server as the person meets it', () => {
  function bundled(stream: StreamingRunner, pythons: Record<string, string> = { python3: '3.11.7' }) {
    const lines: string[] = [];
    const shown: boolean[] = [];
    const env = new ServerEnvironment({ storageDir: tmp, wheel: wheel(), stream, log: (line) => lines.push(line) });
    const server = new BundledServer({
      env,
      lookupPython: async () => undefined,
      run: versions(pythons),
      output: { appendLine: (line) => lines.push(line), show: (preserve) => shown.push(preserve === true) },
    });
    return { server, env, lines, shown };
  }

  it('installs with a progress notification the first time, and at once later', async () => {
    const record: string[][] = [];
    const { server, env } = bundled(fakeStream(record));
    expect(await server.prepare()).toBe(env.python);
    expect(fake.progress.map((p) => p.title)).toEqual(['Toolgate: installing its server (once)']);
    expect(fake.progress[0].reports).toContain('installing the packages');
    expect(record).toHaveLength(2);
    expect(await server.prepare()).toBe(env.python);
    expect(fake.progress).toHaveLength(1);
    expect(record).toHaveLength(2);
  });

  it("shows pip's output and retries when asked", async () => {
    let failures = 1;
    const record: string[][] = [];
    const stream: StreamingRunner = (command, args, onLine, signal) =>
      fakeStream(record, { pipFails: args.includes('pip') && failures-- > 0 })(command, args, onLine, signal);
    const { server, env, lines, shown } = bundled(stream);
    fake.messageAnswers = ['Retry'];
    expect(await server.prepare()).toBe(env.python);
    const error = fake.messages.find((m) => m.level === 'error');
    expect(error?.message).toContain('Toolgate could not install its server: installing the server failed (exit status 1)');
    expect(error?.message).toContain('Output channel "Toolgate Server"');
    expect(error?.items).toEqual(['Retry', 'Show Output']);
    expect(lines).toContain('ERROR: Could not find a version that satisfies the requirement pygls>=2.1');
    expect(shown).toContain(true);
    expect(env.isCurrent()).toBe(true);
  });

  it('says which Pythons work when none does, and installs nothing', async () => {
    const record: string[][] = [];
    const { server } = bundled(fakeStream(record), { python3: '3.8.10' });
    expect(await server.prepare()).toBeUndefined();
    expect(fake.messages).toHaveLength(1);
    expect(fake.messages[0].message).toContain('Toolgate needs Python 3.10 or newer to run its server, and found only python3 is 3.8.10.');
    expect(fake.messages[0].items).toEqual(['Open Settings']);
    expect(record).toEqual([]);
    expect(server.problem).toBe(fake.messages[0].message);
  });

  it('reinstalls from scratch on demand', async () => {
    const record: string[][] = [];
    const { server, env } = bundled(fakeStream(record));
    await server.prepare();
    record.length = 0;
    expect(await server.reinstall()).toBe(env.python);
    expect(record[0]).toEqual(['/usr/bin/python3', '-m', 'venv', env.dir]);
  });
});
