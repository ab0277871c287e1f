import { describe, expect, it } from 'vitest';
import type { LogOutputChannel } from 'vscode';
import { redactingChannel } from '../src/redactingChannel';

const KEY = 'sk-trace-0123456789';

function recorder() {
  const written: unknown[][] = [];
  const channel = {
    name: 'Toolgate Server',
    logLevel: 1,
    trace: (...args: unknown[]) => written.push(['trace', ...args]),
    info: (...args: unknown[]) => written.push(['info', ...args]),
    error: (...args: unknown[]) => written.push(['error', ...args]),
    appendLine: (...args: unknown[]) => written.push(['appendLine', ...args]),
    show: () => written.push(['show']),
  };
  return { written, channel: channel as unknown as LogOutputChannel };
}

describe('redactingChannel', () => {
  it('masks the key in every kind of write, including errors', () => {
    const { written, channel } = recorder();
    const wrapped = redactingChannel(channel, () => [KEY]);
    wrapped.trace(`Sending request 'initialize - (0)'.\nParams: {"initializationOptions":{"apiKey":"${KEY}"}}`);
    wrapped.info(`key ${KEY}`);
    wrapped.appendLine(KEY);
    wrapped.error(new Error(`401 for ${KEY}`));
    const text = JSON.stringify(written) + (written[3][1] as Error).message;
    expect(text).not.toContain(KEY);
    expect(written[0][1]).toContain('"apiKey":"***"');
    expect((written[3][1] as Error).message).toBe('401 for ***');
  });

  it('passes everything else through', () => {
    const { written, channel } = recorder();
    const wrapped = redactingChannel(channel, () => [undefined]);
    wrapped.show();
    expect(wrapped.name).toBe('Toolgate Server');
    expect(wrapped.logLevel).toBe(1);
    wrapped.info('plain', 42);
    expect(written).toEqual([['show'], ['info', 'plain', 42]]);
  });
});
