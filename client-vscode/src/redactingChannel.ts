/** A log channel that masks secrets, so protocol traces (which show initializationOptions) never show the API key. */
import type { LogOutputChannel } from 'vscode';
import { redact } from './transcript';

const WRITERS = new Set(['trace', 'debug', 'info', 'warn', 'error', 'append', 'appendLine', 'replace']);

/** Wrap `inner`: every string written through it has each secret replaced by `***`. */
export function redactingChannel(
  inner: LogOutputChannel,
  secrets: () => readonly (string | undefined)[],
): LogOutputChannel {
  const clean = (value: unknown): unknown => {
    if (typeof value === 'string') {
      return redact(value, secrets());
    }
    if (value instanceof Error) {
      const copy = new Error(redact(value.message, secrets()));
      copy.stack = value.stack === undefined ? undefined : redact(value.stack, secrets());
      return copy;
    }
    return value;
  };
  return new Proxy(inner, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof property === 'string' && WRITERS.has(property) && typeof value === 'function') {
        return (...args: unknown[]) => value.apply(target, args.map(clean));
      }
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
