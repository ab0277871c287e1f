/** Converts the editor's diagnostics into the payload of toolgate.reportDiagnostics. */
import type { ReportedDiagnostic, ReportedDiagnostics } from './protocol';

/** The fields of a vscode.Diagnostic this module reads. */
export interface EditorDiagnostic {
  range: { start: { line: number; character: number }; end: { line: number; character: number } };
  /** vscode.DiagnosticSeverity: 0 Error, 1 Warning, 2 Information, 3 Hint. */
  severity: number;
  message: string;
  source?: string;
  code?: string | number | { value: string | number };
}

/** The server's own diagnostics are not sent back: it knows them already. */
export const OWN_SOURCE = 'toolgate';

/** vscode severity (0-based) → LSP severity (1-based). */
export function toLspSeverity(severity: number): 1 | 2 | 3 | 4 {
  const lsp = severity + 1;
  return lsp >= 1 && lsp <= 4 ? (lsp as 1 | 2 | 3 | 4) : 1;
}

/** Build the report for one document, leaving out the server's own diagnostics. */
export function toReport(uri: string, diagnostics: readonly EditorDiagnostic[]): ReportedDiagnostics {
  const out: ReportedDiagnostic[] = [];
  for (const diagnostic of diagnostics) {
    if (diagnostic.source === OWN_SOURCE) {
      continue;
    }
    const item: ReportedDiagnostic = {
      range: {
        start: { line: diagnostic.range.start.line, character: diagnostic.range.start.character },
        end: { line: diagnostic.range.end.line, character: diagnostic.range.end.character },
      },
      severity: toLspSeverity(diagnostic.severity),
      message: diagnostic.message,
    };
    if (diagnostic.source) {
      item.source = diagnostic.source;
    }
    const code = typeof diagnostic.code === 'object' ? diagnostic.code.value : diagnostic.code;
    if (code !== undefined) {
      item.code = code;
    }
    out.push(item);
  }
  return { uri, diagnostics: out };
}
