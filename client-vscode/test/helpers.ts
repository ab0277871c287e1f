/** Builders shared by the unit tests. */
import type { Proposal } from '../src/protocol';

/** A pending write_file proposal on /work/calc.py with two hunks, changed by `overrides`. */
export function makeProposal(overrides: Partial<Proposal> = {}): Proposal {
  return {
    id: 'p-1',
    runId: 'r-1',
    tool: 'write_file',
    uri: 'file:///work/calc.py',
    diff: '--- a/calc.py\n+++ b/calc.py\n@@ -2 +2 @@\n-    return a - b\n+    return a + b\n',
    hunks: [
      {
        index: 0,
        range: { start: { line: 1, character: 0 }, end: { line: 2, character: 0 } },
        oldText: '    return a - b\n',
        newText: '    return a + b\n',
        header: '@@ -2 +2 @@',
      },
      {
        index: 1,
        range: { start: { line: 5, character: 0 }, end: { line: 6, character: 0 } },
        oldText: '    return a + b\n',
        newText: '    return a * b\n    # fixed\n',
        header: '@@ -6,1 +6,2 @@',
      },
    ],
    why: 'add subtracts',
    status: 'pending',
    isNewFile: false,
    proposedText: 'def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n    # fixed\n',
    version: 3,
    ...overrides,
  };
}

/** A server that records executeCommand calls and answers from a table. */
/** The part of a cancellation token the extension reads. */
export interface FakeToken {
  readonly isCancellationRequested: boolean;
  onCancellationRequested(listener: () => void): void;
}

/** The calls that decide something: the diagnostics reported along the way left out. */
export function decisions(server: FakeServer): FakeServer['calls'] {
  return server.calls.filter((c) => c.command !== 'toolgate.reportDiagnostics');
}

export class FakeServer {
  calls: { command: string; args: unknown[] }[] = [];
  running = true;
  answers: Record<string, unknown> = {};
  failWith: Error | undefined;

  isRunning(): boolean {
    return this.running;
  }

  /** An answer that is a function is called with the request's token (to answer later). */
  async execute<T>(command: string, args: unknown[], token?: FakeToken): Promise<T> {
    this.calls.push({ command, args });
    if (this.failWith) {
      throw this.failWith;
    }
    const answer = this.answers[command];
    return (typeof answer === 'function' ? answer(token) : answer) as T;
  }
}

/** Let pending promise callbacks run. */
export async function flush(): Promise<void> {
  for (let i = 0; i < 5; i++) {
    await new Promise((resolve) => setTimeout(resolve, 0));
  }
}
