/**
 * The server this extension brings: Toolgate's wheel, built from the same commit and shipped in
 * the .vsix (server/toolgate-<version>-py3-none-any.whl), installed into a private virtual
 * environment in the extension's global storage the first time it is needed.
 *
 * The environment is made with the Python extension's interpreter, else `python3`, whichever is
 * 3.10 or newer first; pip installs the wheel there, its dependencies coming from the person's
 * own package index (pip's configuration and environment, untouched). A marker file records
 * which wheel (by its sha256) is installed: later starts that find the same wheel start at
 * once, and a newer extension's wheel replaces the old one.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { ProcessRunner, PythonExtensionLookup } from './python';
import { compareVersions, runProcess } from './python';

/** The oldest Python the server runs on. */
export const MIN_PYTHON = '3.10';

/** The folder below the extension's global storage that holds the environment. */
export const ENV_FOLDER = 'server-env';

/** The file in the environment that names the wheel installed there. */
export const MARKER = 'toolgate-wheel.json';

/** How to point the extension at a Python of one's own: said whenever no usable one is found. */
export const HOW_TO_POINT =
  'Install Python 3.10 or newer (3.10–3.13), then select it with "Python: Select Interpreter" ' +
  'or set "toolgate.pythonPath" to a Python that has Toolgate installed.';

/** A line of pip's output as the progress notification shows it; undefined for lines it skips. */
export function progressLine(line: string): string | undefined {
  const text = line.trim();
  let match = /^Collecting (\S+)/.exec(text);
  if (match) {
    return `fetching ${match[1]}`;
  }
  match = /^(?:Downloading|Using cached) (\S+)/.exec(text);
  if (match) {
    return `fetching ${path.basename(match[1]).split('-')[0]}`;
  }
  if (text.startsWith('Installing collected packages')) {
    return 'installing the packages';
  }
  if (text.startsWith('Successfully installed')) {
    return 'installed';
  }
  return undefined;
}

/** The wheel the extension carries in `folder`, for its own version; undefined if there is none. */
export function bundledWheel(folder: string, version: string): string | undefined {
  let names: string[];
  try {
    names = fs.readdirSync(folder);
  } catch {
    return undefined;
  }
  const name = names.find((file) => file.startsWith(`toolgate-${version}-`) && file.endsWith('.whl'));
  return name ? path.join(folder, name) : undefined;
}

/** The sha256 of a file, hex. */
export function sha256(file: string): string {
  return createHash('sha256').update(fs.readFileSync(file)).digest('hex');
}

/** The interpreter inside a virtual environment. */
export function venvPython(envDir: string, platform: NodeJS.Platform = process.platform): string {
  return platform === 'win32' ? path.join(envDir, 'Scripts', 'python.exe') : path.join(envDir, 'bin', 'python');
}

/** An interpreter that can make the environment, or why there is none. */
export type BaseInterpreter = { ok: true; python: string; version: string } | { ok: false; message: string };

/** `X.Y.Z` of an interpreter and the file it runs from; undefined when it does not run. */
export async function pythonVersion(
  python: string,
  run: ProcessRunner,
): Promise<{ version: string; executable: string } | undefined> {
  try {
    const result = await run(python, ['-c', 'import sys; print("%d.%d.%d" % sys.version_info[:3]); print(sys.executable)']);
    const match = /^(\d+\.\d+\.\d+)\s*\n(.*\S)?/m.exec(result.stdout);
    return result.code === 0 && match ? { version: match[1], executable: match[2] || python } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The Python to make the environment with: the Python extension's, else python3, the first
 * that is 3.10 or newer. When none is, one message that says what was found, which versions
 * work and how to point the extension at one.
 */
export async function findBaseInterpreter(lookup: PythonExtensionLookup, run: ProcessRunner): Promise<BaseInterpreter> {
  const candidates: string[] = [];
  try {
    const fromExtension = await lookup();
    if (fromExtension) {
      candidates.push(fromExtension);
    }
  } catch {
    // The Python extension failing must not stop this one: python3 is tried next.
  }
  candidates.push('python3');
  const tooOld: string[] = [];
  for (const python of candidates) {
    const found = await pythonVersion(python, run);
    if (found && compareVersions(found.version, MIN_PYTHON) >= 0) {
      // The file itself: the environment is made with the interpreter that was checked.
      return { ok: true, python: found.executable, version: found.version };
    }
    if (found) {
      tooOld.push(`${python} is ${found.version}`);
    }
  }
  const seen = tooOld.length ? `found only ${tooOld.join(', ')}` : 'found no Python (python3 is not on PATH)';
  return {
    ok: false,
    message: `Toolgate needs Python ${MIN_PYTHON} or newer to run its server, and ${seen}. ${HOW_TO_POINT}`,
  };
}

/** A program's run with its output as it comes, line by line; resolves to its exit code and output. */
export type StreamingRunner = (
  command: string,
  args: string[],
  onLine: (line: string) => void,
  signal?: AbortSignal,
) => Promise<{ code: number; output: string }>;

/** Run a program with node's child_process, calling `onLine` for each line it prints. */
export const streamProcess: StreamingRunner = (command, args, onLine, signal) =>
  new Promise((resolve, reject) => {
    const child = spawn(command, args, { windowsHide: true, signal, env: { ...process.env, PIP_DISABLE_PIP_VERSION_CHECK: '1' } });
    let output = '';
    let partial = '';
    const take = (chunk: Buffer) => {
      const text = chunk.toString();
      output += text;
      const lines = (partial + text).split(/\r?\n/);
      partial = lines.pop() ?? '';
      lines.forEach(onLine);
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    child.on('error', reject);
    child.on('close', (code) => {
      if (partial) {
        onLine(partial);
      }
      resolve({ code: code ?? 1, output });
    });
  });

/** A step of the environment's install failed: what was run and everything it printed. */
export class InstallFailed extends Error {
  constructor(
    message: string,
    readonly output: string,
  ) {
    super(message);
  }
}

/** What the environment needs from outside: where it lives, the wheel, and how to run things. */
export interface EnvironmentDeps {
  storageDir: string;
  wheel: string;
  run?: ProcessRunner;
  stream?: StreamingRunner;
  /** Every line the install steps print (the Output channel). */
  log(line: string): void;
}

/** The private environment with the bundled server in it. */
export class ServerEnvironment {
  readonly dir: string;
  readonly python: string;
  private readonly run: ProcessRunner;
  private readonly stream: StreamingRunner;

  constructor(private readonly deps: EnvironmentDeps) {
    this.dir = path.join(deps.storageDir, ENV_FOLDER);
    this.python = venvPython(this.dir);
    this.run = deps.run ?? runProcess;
    this.stream = deps.stream ?? streamProcess;
  }

  private wheelHash(): string {
    return sha256(this.deps.wheel);
  }

  /** The wheel installed in the environment, as its marker says; undefined when none is. */
  installed(): { wheel: string; sha256: string } | undefined {
    try {
      const marker = JSON.parse(fs.readFileSync(path.join(this.dir, MARKER), 'utf8')) as { wheel?: unknown; sha256?: unknown };
      if (typeof marker.wheel === 'string' && typeof marker.sha256 === 'string' && fs.existsSync(this.python)) {
        return { wheel: marker.wheel, sha256: marker.sha256 };
      }
    } catch {
      // No marker, or a damaged one: nothing usable is installed.
    }
    return undefined;
  }

  /** Whether the environment holds this extension's own wheel: the server can start at once. */
  isCurrent(): boolean {
    return this.installed()?.sha256 === this.wheelHash();
  }

  /**
   * Make the environment (when there is none) with `base`, and install the bundled wheel into
   * it, replacing an older one. `report` gets short progress messages.
   */
  async install(base: string, report: (message: string) => void, signal?: AbortSignal): Promise<void> {
    const { log } = this.deps;
    if (!fs.existsSync(this.python)) {
      fs.rmSync(this.dir, { recursive: true, force: true });
      fs.mkdirSync(path.dirname(this.dir), { recursive: true });
      report('creating a virtual environment');
      await this.step([base, '-m', 'venv', this.dir], 'creating the virtual environment failed', signal);
    }
    const previous = this.installed();
    // The marker goes before pip runs, so a failed or interrupted install is redone next time.
    fs.rmSync(path.join(this.dir, MARKER), { force: true });
    const wheel = this.deps.wheel;
    if (previous) {
      report(`replacing ${previous.wheel}`);
      // The same version number may carry other code (a build from another commit).
      await this.step(
        [this.python, '-m', 'pip', 'install', '--force-reinstall', '--no-deps', wheel],
        'installing the server failed',
        signal,
        report,
      );
    }
    report('installing the server and its dependencies');
    await this.step([this.python, '-m', 'pip', 'install', wheel], 'installing the server failed', signal, report);
    fs.writeFileSync(
      path.join(this.dir, MARKER),
      JSON.stringify({ wheel: path.basename(wheel), sha256: this.wheelHash() }, null, 2),
    );
    log(`Installed ${path.basename(wheel)} into ${this.dir}`);
  }

  /** Throw the environment away (Toolgate: Reinstall Server makes it again). */
  remove(): void {
    fs.rmSync(this.dir, { recursive: true, force: true });
  }

  /** The version `toolgate --version` reports in the environment (a check after install). */
  async version(): Promise<string | undefined> {
    try {
      const result = await this.run(this.python, ['-m', 'toolgate', '--version']);
      return /toolgate\s+(\S+)/.exec(result.stdout)?.[1];
    } catch {
      return undefined;
    }
  }

  private async step(
    argv: string[],
    failure: string,
    signal?: AbortSignal,
    report?: (message: string) => void,
  ): Promise<void> {
    const [command, ...args] = argv;
    this.deps.log(`$ ${argv.join(' ')}`);
    let result: { code: number; output: string };
    try {
      result = await this.stream(
        command,
        args,
        (line) => {
          this.deps.log(line);
          const shown = report && progressLine(line);
          if (shown) {
            report(shown);
          }
        },
        signal,
      );
    } catch (error) {
      throw new InstallFailed(`${failure}: ${command} could not run (${(error as Error).message})`, '');
    }
    if (result.code !== 0) {
      throw new InstallFailed(`${failure} (exit status ${result.code})`, result.output);
    }
  }
}
