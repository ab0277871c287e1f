import { describe, expect, it } from 'vitest';
import { toLspSeverity, toReport } from '../src/diagnostics';

const range = { start: { line: 3, character: 4 }, end: { line: 3, character: 9 } };

describe('toReport', () => {
  it('converts to the LSP shape and leaves out the server\'s own diagnostics', () => {
    const report = toReport('file:///work/calc.py', [
      { range, severity: 0, message: 'undefined name x', source: 'Pylance', code: { value: 'reportUndefinedVariable' } },
      { range, severity: 1, message: 'unused import', source: 'ruff', code: 'F401' },
      { range, severity: 0, message: 'test failed', source: 'toolgate' },
      { range, severity: 3, message: 'hint' },
    ]);
    expect(report).toEqual({
      uri: 'file:///work/calc.py',
      diagnostics: [
        { range, severity: 1, message: 'undefined name x', source: 'Pylance', code: 'reportUndefinedVariable' },
        { range, severity: 2, message: 'unused import', source: 'ruff', code: 'F401' },
        { range, severity: 4, message: 'hint' },
      ],
    });
  });

  it('maps severities, defaulting odd values to error', () => {
    expect([0, 1, 2, 3, 9, -1].map(toLspSeverity)).toEqual([1, 2, 3, 4, 1, 1]);
  });
});
