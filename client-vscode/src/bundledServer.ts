/**
 * The bundled server as the person meets it: a progress notification while the private
 * environment is made, one message when no Python will do, pip's output in the Output channel
 * and a Retry button when the install fails. See serverEnv.ts for the environment itself.
 */
import * as api from './vscodeapi';
import type { ProcessRunner, PythonExtensionLookup } from './python';
import { findBaseInterpreter, InstallFailed, type ServerEnvironment } from './serverEnv';

/** What the bundled server needs besides the environment. */
export interface BundledServerDeps {
  env: ServerEnvironment;
  lookupPython: PythonExtensionLookup;
  run: ProcessRunner;
  output: { appendLine(line: string): void; show(preserveFocus?: boolean): void };
}

/** Hint for the one failure most people hit: Debian's Python without its venv module. */
function hintFor(output: string): string {
  return /ensurepip|No module named venv/i.test(output)
    ? ' This Python cannot make virtual environments: on Debian or Ubuntu install python3-venv (sudo apt-get install python3-venv).'
    : '';
}

/** Makes the private environment when needed and says what went wrong when it cannot. */
export class BundledServer {
  /** Why the last prepare() gave no interpreter (shown again by Check Setup). */
  problem: string | undefined;
  /** Seconds the last install took, for the Output channel and the tests. */
  lastInstallSeconds: number | undefined;

  constructor(private readonly deps: BundledServerDeps) {}

  /** The environment's interpreter, installing the bundled server first when it is not there yet. */
  async prepare(): Promise<string | undefined> {
    const { env, output } = this.deps;
    if (env.isCurrent()) {
      this.problem = undefined;
      return env.python;
    }
    const base = await findBaseInterpreter(this.deps.lookupPython, this.deps.run);
    if (!base.ok) {
      this.problem = base.message;
      output.appendLine(base.message);
      void api.showErrorMessage(base.message, 'Open Settings').then((choice) => {
        if (choice === 'Open Settings') {
          void api.executeCommand('workbench.action.openSettings', 'toolgate.pythonPath');
        }
      });
      return undefined;
    }
    output.appendLine(`Installing the bundled server with ${base.python} (Python ${base.version}) into ${env.dir}`);
    const started = Date.now();
    try {
      await api.withNotificationProgress('Toolgate: installing its server (once)', async (progress, token) => {
        const abort = new AbortController();
        token.onCancellationRequested(() => abort.abort());
        await env.install(base.python, (message) => progress.report({ message }), abort.signal);
      });
    } catch (error) {
      const failed = error instanceof InstallFailed ? error : undefined;
      const message =
        `Toolgate could not install its server: ${(error as Error).message}.${hintFor(failed?.output ?? '')} ` +
        'The output is in the Output channel "Toolgate Server".';
      this.problem = message;
      output.appendLine(message);
      output.show(true);
      const choice = await api.showErrorMessage(message, 'Retry', 'Show Output');
      if (choice === 'Retry') {
        return this.prepare();
      }
      if (choice === 'Show Output') {
        output.show(false);
      }
      return undefined;
    }
    this.lastInstallSeconds = (Date.now() - started) / 1000;
    output.appendLine(`Server installed in ${this.lastInstallSeconds.toFixed(1)} s`);
    this.problem = undefined;
    return env.python;
  }

  /** Throw the environment away and make it again (Toolgate: Reinstall Server). */
  async reinstall(): Promise<string | undefined> {
    this.deps.env.remove();
    return this.prepare();
  }
}
