import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  checkToolgate,
  compareVersions,
  installCommand,
  interpreterFromPythonApi,
  parseVersion,
  resolveServerLaunch,
} from '../src/python';

const none = async () => undefined;

describe('resolveServerLaunch', () => {
  it('prefers the explicit server command', async () => {
    const launch = await resolveServerLaunch(
      { pythonPath: '/py', serverCommand: ['/opt/bin/toolgate', 'lsp', '--tcp', '127.0.0.1:9'] },
      async () => '/ext/python',
    );
    expect(launch).toEqual({
      command: '/opt/bin/toolgate',
      args: ['lsp', '--tcp', '127.0.0.1:9'],
      origin: 'serverCommand',
    });
  });

  it('then toolgate.pythonPath', async () => {
    const launch = await resolveServerLaunch({ pythonPath: '/py', serverCommand: [] }, async () => '/ext/python');
    expect(launch).toEqual({ command: '/py', args: ['-m', 'toolgate', 'lsp'], python: '/py', origin: 'pythonPath' });
  });

  it("then the Python extension's interpreter", async () => {
    const launch = await resolveServerLaunch({ pythonPath: '', serverCommand: [] }, async () => '/ext/python');
    expect(launch.python).toBe('/ext/python');
    expect(launch.origin).toBe('pythonExtension');
  });

  it('else python3, also when the Python extension fails', async () => {
    expect((await resolveServerLaunch({ pythonPath: '', serverCommand: [] }, none)).python).toBe('python3');
    const broken = async () => {
      throw new Error('extension not ready');
    };
    const launch = await resolveServerLaunch({ pythonPath: '', serverCommand: [] }, broken);
    expect(launch).toMatchObject({ python: 'python3', origin: 'default' });
  });
});

describe('versions', () => {
  it('parses the --version line', () => {
    expect(parseVersion('toolgate 0.1.0\n')).toBe('0.1.0');
    expect(parseVersion('Toolgate v1.2')).toBe('1.2');
    expect(parseVersion('/usr/bin/python3: No module named toolgate')).toBeUndefined();
  });

  it('compares numerically', () => {
    expect(compareVersions('0.10.0', '0.9.9')).toBeGreaterThan(0);
    expect(compareVersions('1.0', '1.0.0')).toBe(0);
    expect(compareVersions('0.1.0', '0.2.0')).toBeLessThan(0);
  });

  it('quotes interpreters with spaces in the install command', () => {
    expect(installCommand('/opt/my env/python')).toBe('"/opt/my env/python" -m pip install --upgrade toolgate');
    expect(installCommand('python3')).toBe('python3 -m pip install --upgrade toolgate');
  });
});

describe('checkToolgate against real processes', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'toolgate-python-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  /** A stand-in interpreter: a shell script that answers `-m toolgate --version`. */
  function fakePython(name: string, body: string): string {
    const file = path.join(dir, name);
    fs.writeFileSync(file, `#!/bin/sh\n${body}\n`, { mode: 0o755 });
    return file;
  }

  it('accepts a recent enough server', async () => {
    const python = fakePython('ok', 'echo "toolgate 0.3.1"');
    expect(await checkToolgate(python)).toEqual({ ok: true, version: '0.3.1' });
  });

  it('says how to install a missing server', async () => {
    const python = fakePython('missing', 'echo "$0: No module named toolgate" >&2; exit 1');
    const check = await checkToolgate(python);
    expect(check.ok).toBe(false);
    if (!check.ok) {
      expect(check.message).toContain('not installed');
      expect(check.message).toContain(`${python} -m pip install --upgrade toolgate`);
      expect(check.installCommand).toBe(`${python} -m pip install --upgrade toolgate`);
    }
  });

  it('says how to upgrade an old server', async () => {
    const python = fakePython('old', 'echo "toolgate 0.0.9"');
    const check = await checkToolgate(python, undefined, '0.1.0');
    expect(check.ok).toBe(false);
    if (!check.ok) {
      expect(check.message).toContain('toolgate 0.0.9');
      expect(check.message).toContain('0.1.0 or newer');
      expect(check.message).toContain('pip install --upgrade toolgate');
    }
  });

  it('explains an interpreter that does not exist', async () => {
    const check = await checkToolgate(path.join(dir, 'no-such-python'));
    expect(check.ok).toBe(false);
    if (!check.ok) {
      expect(check.message).toContain('could not be run');
      expect(check.message).toContain('toolgate.pythonPath');
    }
  });

  const venvPython = path.resolve(__dirname, '..', '..', '.venv', 'bin', 'python');
  it.skipIf(!fs.existsSync(venvPython))("accepts the project's own server", async () => {
    const check = await checkToolgate(venvPython);
    expect(check.ok).toBe(true);
  });
});

describe('interpreterFromPythonApi', () => {
  const resource = { fsPath: '/work' };

  it('takes the resolved executable of the active environment', async () => {
    const seen: unknown[] = [];
    const api = {
      environments: {
        getActiveEnvironmentPath: (r?: unknown) => {
          seen.push(r);
          return { path: '/envs/venv' };
        },
        resolveEnvironment: async (env: unknown) => {
          expect(env).toEqual({ path: '/envs/venv' });
          return { executable: { uri: { fsPath: '/envs/venv/bin/python' } } };
        },
      },
    };
    expect(await interpreterFromPythonApi(api, resource)).toBe('/envs/venv/bin/python');
    expect(seen).toEqual([resource]);
  });

  it("falls back to the environment's path when it cannot be resolved", async () => {
    const api = {
      environments: {
        getActiveEnvironmentPath: () => ({ path: '/usr/bin/python3.12' }),
        resolveEnvironment: async () => undefined,
      },
    };
    expect(await interpreterFromPythonApi(api, resource)).toBe('/usr/bin/python3.12');
  });

  it('reads the older settings API', async () => {
    const api = { settings: { getExecutionDetails: () => ({ execCommand: ['/opt/py/bin/python', '-X'] }) } };
    expect(await interpreterFromPythonApi(api, resource)).toBe('/opt/py/bin/python');
  });

  it('gives nothing when no interpreter is selected', async () => {
    expect(await interpreterFromPythonApi(undefined, resource)).toBeUndefined();
    expect(await interpreterFromPythonApi({}, resource)).toBeUndefined();
    const empty = {
      environments: { getActiveEnvironmentPath: () => undefined },
      settings: { getExecutionDetails: () => ({ execCommand: [] }) },
    };
    expect(await interpreterFromPythonApi(empty, resource)).toBeUndefined();
  });
});
