import { describe, expect, it } from 'vitest';
import { needsRestart, readSettings, toInitializationOptions } from '../src/settings';

const reader = (values: Record<string, unknown>) => (key: string) => values[key];

describe('readSettings', () => {
  it('gives the documented defaults when nothing is set', () => {
    const settings = readSettings(reader({}));
    expect(settings).toMatchObject({
      model: 'gpt-4o-mini',
      toolCallingMode: 'auto',
      limits: { maxSteps: 30, maxLlmCalls: 40, maxRunSeconds: 900, maxToolRetries: 3, commandTimeoutSeconds: 300 },
      confirmInEditor: false,
      openDiff: 'auto',
      testFailureSeverity: 'error',
      pythonPath: '',
      serverCommand: [],
    });
  });

  it('keeps valid values and drops wrong ones', () => {
    const settings = readSettings(
      reader({
        model: 'qwen2.5-coder',
        baseUrl: 'http://127.0.0.1:8080/v1',
        'toolCalling.mode': 'text',
        approval: { write_file: 'auto', run_tests: 'deny', git_commit: 'sometimes', 7: 3 },
        'limits.maxSteps': 5,
        'limits.maxLlmCalls': -1,
        'limits.maxRunSeconds': 'soon',
        'limits.maxToolRetries': 0,
        'limits.commandTimeoutSeconds': 0,
        'review.confirmInEditor': true,
        'diagnostics.testFailureSeverity': 'loud',
        pythonPath: '  /opt/py/bin/python  ',
        serverCommand: ['toolgate', '', 'lsp', 4],
      }),
    );
    expect(settings.model).toBe('qwen2.5-coder');
    expect(settings.baseUrl).toBe('http://127.0.0.1:8080/v1');
    expect(settings.toolCallingMode).toBe('text');
    expect(settings.approval).toEqual({ write_file: 'auto', run_tests: 'deny' });
    expect(settings.limits).toEqual({
      maxSteps: 5,
      maxLlmCalls: 40,
      maxRunSeconds: 900,
      maxToolRetries: 0,
      commandTimeoutSeconds: 300,
    });
    expect(settings.confirmInEditor).toBe(true);
    expect(settings.testFailureSeverity).toBe('error');
    expect(settings.pythonPath).toBe('/opt/py/bin/python');
    expect(settings.serverCommand).toEqual(['toolgate', 'lsp']);
  });

  it('keeps a fractional command timeout and drops a negative retry count', () => {
    const settings = readSettings(
      reader({ 'limits.commandTimeoutSeconds': 2.5, 'limits.maxToolRetries': -1 }),
    );
    expect(settings.limits.commandTimeoutSeconds).toBe(2.5);
    expect(settings.limits.maxToolRetries).toBe(3);
  });

  it('rejects an unknown tool-calling mode', () => {
    expect(readSettings(reader({ 'toolCalling.mode': 'magic' })).toolCallingMode).toBe('auto');
  });

  it('reads the approval mode, and falls back to ask for one it does not know', () => {
    expect(readSettings(reader({})).approvalMode).toBe('ask');
    expect(readSettings(reader({ approvalMode: 'read-only' })).approvalMode).toBe('read-only');
    expect(readSettings(reader({ approvalMode: 'yolo' })).approvalMode).toBe('ask');
    const set = (key: string) => key === 'approvalMode';
    const options = toInitializationOptions(readSettings(reader({ approvalMode: 'auto-edits' })), undefined, true, set);
    expect(options.approvalMode).toBe('auto-edits');
    expect('approvalMode' in toInitializationOptions(readSettings(reader({})), undefined, true, () => false)).toBe(false);
  });
});

describe('toInitializationOptions', () => {
  const settings = readSettings(reader({ approval: { write_file: 'ask' } }));

  it('has the protocol shape, with trust and the key', () => {
    const options = toInitializationOptions(settings, 'sk-secret-value', false);
    expect(options).toEqual({
      model: 'gpt-4o-mini',
      baseUrl: 'https://api.openai.com/v1',
      apiKey: 'sk-secret-value',
      toolCalling: { mode: 'auto' },
      approval: { write_file: 'ask' },
      approvalMode: 'ask',
      limits: { maxSteps: 30, maxLlmCalls: 40, maxRunSeconds: 900, maxToolRetries: 3, commandTimeoutSeconds: 300 },
      review: { confirmInEditor: false },
      diagnostics: { testFailureSeverity: 'error' },
      trusted: false,
    });
  });

  it('sends null for the key when there is none, so a removed key is removed on the server', () => {
    const options = toInitializationOptions(settings, undefined, true);
    expect(options.apiKey).toBeNull();
    expect(options.trusted).toBe(true);
  });

  it('does not share objects with the settings', () => {
    const options = toInitializationOptions(settings, undefined, true);
    options.approval!.write_file = 'deny';
    expect(settings.approval.write_file).toBe('ask');
  });
});

describe('toInitializationOptions with only what the person set', () => {
  it('sends null for an unset model and base URL and leaves unset groups out', () => {
    const settings = readSettings(reader({}));
    const options = toInitializationOptions(settings, undefined, true, () => false);
    expect(options).toEqual({
      model: null,
      baseUrl: null,
      apiKey: null,
      review: { confirmInEditor: false },
      diagnostics: { testFailureSeverity: 'error' },
      trusted: true,
    });
  });

  it('sends the values the person set, and only those limits', () => {
    const settings = readSettings(reader({ model: 'qwen', 'limits.maxSteps': 5, 'toolCalling.mode': 'text' }));
    const set = new Set(['model', 'limits.maxSteps', 'toolCalling.mode']);
    const options = toInitializationOptions(settings, 'sk-1', true, (key) => set.has(key));
    expect(options.model).toBe('qwen');
    expect(options.baseUrl).toBeNull();
    expect(options.limits).toEqual({ maxSteps: 5 });
    expect(options.toolCalling).toEqual({ mode: 'text' });
    expect('approval' in options).toBe(false);
  });
});

describe('needsRestart', () => {
  it('is true for the interpreter and the server command only', () => {
    expect(needsRestart((section) => section === 'toolgate.pythonPath')).toBe(true);
    expect(needsRestart((section) => section === 'toolgate.serverCommand')).toBe(true);
    expect(needsRestart((section) => section === 'toolgate.model')).toBe(false);
  });
});
