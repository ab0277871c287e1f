/** Which command starts the server, and whether the interpreter has a recent enough `toolgate`. */
import { execFile } from 'node:child_process';

/** Oldest server this client speaks to. */
export const MIN_TOOLGATE_VERSION = '0.1.0';

/** How to start the server process. `python` is set when the command runs `python -m toolgate`. */
export interface ServerLaunch {
  command: string;
  args: string[];
  python?: string;
  /** Where the interpreter came from, for messages; `bundled`: the extension's own environment. */
  origin: 'serverCommand' | 'pythonPath' | 'pythonExtension' | 'default' | 'bundled';
}

/** Find the interpreter the Python extension has selected; undefined when it has none. */
export type PythonExtensionLookup = () => Promise<string | undefined>;

/** The part of the Python extension's exported API this extension reads (both its forms). */
export interface PythonExtensionApi {
  environments?: {
    getActiveEnvironmentPath(resource?: unknown): { path: string } | undefined;
    resolveEnvironment?(env: unknown): Promise<{ executable?: { uri?: { fsPath: string } } } | undefined>;
  };
  settings?: { getExecutionDetails(resource?: unknown): { execCommand?: string[] } };
}

/**
 * The interpreter selected in the Python extension: the resolved executable of the active
 * environment, else the environment's own path, else the older settings API's command.
 */
export async function interpreterFromPythonApi(
  api: PythonExtensionApi | undefined,
  resource: unknown,
): Promise<string | undefined> {
  const environments = api?.environments;
  if (environments) {
    const active = environments.getActiveEnvironmentPath(resource);
    if (active && environments.resolveEnvironment) {
      const resolved = await environments.resolveEnvironment(active);
      const executable = resolved?.executable?.uri?.fsPath;
      if (executable) {
        return executable;
      }
    }
    if (active?.path) {
      return active.path;
    }
  }
  return api?.settings?.getExecutionDetails(resource).execCommand?.[0] || undefined;
}

/** Choose the server command: `serverCommand`, else `pythonPath`, else the Python extension's, else python3. */
export async function resolveServerLaunch(
  settings: { pythonPath: string; serverCommand: string[] },
  lookupPythonExtension: PythonExtensionLookup,
): Promise<ServerLaunch> {
  if (settings.serverCommand.length > 0) {
    const [command, ...args] = settings.serverCommand;
    return { command, args, origin: 'serverCommand' };
  }
  if (settings.pythonPath) {
    return pythonLaunch(settings.pythonPath, 'pythonPath');
  }
  let fromExtension: string | undefined;
  try {
    fromExtension = await lookupPythonExtension();
  } catch {
    // The Python extension failing must not stop this one: fall through to python3.
    fromExtension = undefined;
  }
  if (fromExtension) {
    return pythonLaunch(fromExtension, 'pythonExtension');
  }
  return pythonLaunch('python3', 'default');
}

function pythonLaunch(python: string, origin: ServerLaunch['origin']): ServerLaunch {
  return { command: python, args: ['-m', 'toolgate', 'lsp'], python, origin };
}

/** Parse `toolgate X.Y.Z` (as printed by `--version`) into its version. */
export function parseVersion(output: string): string | undefined {
  const match = /toolgate\s+v?(\d+(?:\.\d+){0,2})/i.exec(output);
  return match?.[1];
}

/** Compare dotted versions numerically: negative, zero or positive. */
export function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map((part) => Number.parseInt(part, 10) || 0);
  const pb = b.split('.').map((part) => Number.parseInt(part, 10) || 0);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const diff = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (diff !== 0) {
      return diff;
    }
  }
  return 0;
}

/** The shell command that installs or upgrades the server for this interpreter. */
export function installCommand(python: string): string {
  const quoted = /[\s"']/.test(python) ? `"${python}"` : python;
  return `${quoted} -m pip install --upgrade toolgate`;
}

export type VersionCheck =
  | { ok: true; version: string }
  | { ok: false; message: string; installCommand: string };

/** Runs a program and gives back its exit code and output; rejects only when it cannot start. */
export type ProcessRunner = (
  command: string,
  args: string[],
) => Promise<{ code: number; stdout: string; stderr: string }>;

/** Run a program with a timeout, using node's child_process. */
export const runProcess: ProcessRunner = (command, args) =>
  new Promise((resolve, reject) => {
    execFile(command, args, { timeout: 20_000, windowsHide: true }, (error, stdout, stderr) => {
      if (error && typeof (error as NodeJS.ErrnoException).code === 'string') {
        // ENOENT, EACCES…: the program itself could not run.
        reject(error);
        return;
      }
      const code = error ? ((error as { code?: number }).code ?? 1) : 0;
      resolve({ code, stdout: String(stdout), stderr: String(stderr) });
    });
  });

/** Check that `python -m toolgate --version` answers with at least MIN_TOOLGATE_VERSION. */
export async function checkToolgate(
  python: string,
  run: ProcessRunner = runProcess,
  minVersion: string = MIN_TOOLGATE_VERSION,
): Promise<VersionCheck> {
  const install = installCommand(python);
  let result: { code: number; stdout: string; stderr: string };
  try {
    result = await run(python, ['-m', 'toolgate', '--version']);
  } catch (error) {
    return {
      ok: false,
      message:
        `Toolgate: the Python interpreter "${python}" could not be run (${(error as Error).message}). ` +
        'Set "toolgate.pythonPath" to a Python 3.10+ interpreter, then install the server with: ' +
        install,
      installCommand: install,
    };
  }
  const version = parseVersion(`${result.stdout}\n${result.stderr}`);
  if (result.code !== 0 || !version) {
    return {
      ok: false,
      message:
        `Toolgate: the server package "toolgate" is not installed for ${python}. ` +
        `Install it with: ${install}`,
      installCommand: install,
    };
  }
  if (compareVersions(version, minVersion) < 0) {
    return {
      ok: false,
      message:
        `Toolgate: ${python} has toolgate ${version}, but this extension needs ${minVersion} or newer. ` +
        `Upgrade it with: ${install}`,
      installCommand: install,
    };
  }
  return { ok: true, version };
}
