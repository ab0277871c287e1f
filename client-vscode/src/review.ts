/** Diff review: the read-only proposed documents, the diff views and the context keys that gate Accept/Reject. */
import * as api from './vscodeapi';
import type { Proposal } from './protocol';
import { PROPOSAL_SCHEME } from './protocol';
import type { ProposalStore, Side } from './proposals';
import { parseProposalQuery, proposalQuery, sameUri } from './proposals';

/** Context key: the active editor is a pending proposal's diff. */
export const CONTEXT_IN_VIEW = 'toolgate-vscode.proposalInView';
/** Context key: number of pending proposals. */
export const CONTEXT_PENDING = 'toolgate-vscode.pendingCount';

/** The path part of the proposal document's uri: the file's own path, so the language is recognised. */
function pathOf(uri: string): string {
  try {
    return api.parseUri(uri).path;
  } catch {
    return `/${uri}`;
  }
}

/** The uri of the read-only document that shows one side of a proposal. */
export function proposalDocumentUri(proposal: Proposal, side: Side = 'proposed'): api.Uri {
  return api.makeUri(PROPOSAL_SCHEME, pathOf(proposal.uri), proposalQuery(proposal.id, side));
}

/** The proposal id a uri of the proposal scheme stands for. */
export function proposalIdOf(uri: { scheme: string; query: string } | undefined): string | undefined {
  if (!uri || uri.scheme !== PROPOSAL_SCHEME) {
    return undefined;
  }
  return parseProposalQuery(uri.query)?.id;
}

/** Serves the proposed text (and an empty original for new files) as read-only documents. */
export class ProposalContentProvider implements api.TextDocumentContentProvider {
  private readonly changed = api.newEventEmitter<api.Uri>();
  readonly onDidChange = this.changed.event;

  constructor(private readonly store: ProposalStore) {}

  provideTextDocumentContent(uri: api.Uri): string {
    const parsed = parseProposalQuery(uri.query);
    if (!parsed) {
      return '';
    }
    const proposal = this.store.get(parsed.id);
    if (!proposal) {
      return '';
    }
    return parsed.side === 'original' ? '' : proposal.proposedText;
  }

  /** Tell the editor the proposed text changed (a re-based proposal). */
  refresh(proposal: Proposal): void {
    this.changed.fire(proposalDocumentUri(proposal, 'proposed'));
  }

  dispose(): void {
    this.changed.dispose();
  }
}

/** The diff title: tool and path. */
export function diffTitle(proposal: Proposal, relativePath: string): string {
  const suffix = proposal.isNewFile ? ' (new file)' : '';
  return `${proposal.tool}: ${relativePath}${suffix} ↔ proposed`;
}

/** Opens and closes proposal diffs and keeps the context keys current. */
export class DiffReview {
  constructor(private readonly store: ProposalStore) {}

  /** Open the diff between the current text (or nothing, for a new file) and the proposed text. */
  async open(proposal: Proposal): Promise<void> {
    const left = proposal.isNewFile
      ? proposalDocumentUri(proposal, 'original')
      : api.parseUri(proposal.uri);
    const right = proposalDocumentUri(proposal, 'proposed');
    const title = diffTitle(proposal, api.asRelativePath(proposal.uri));
    await api.executeCommand('vscode.diff', left, right, title, { preview: false });
    await this.updateContext();
  }

  /** Close every tab that shows this proposal's diff. */
  async close(id: string): Promise<void> {
    const tabs = api.diffTabs().filter((tab) => proposalIdOf(tab.modified) === id);
    if (tabs.length > 0) {
      await api.closeTabs(tabs.map((tab) => tab.tab));
    }
    await this.updateContext();
  }

  /** The pending proposal whose diff is the active tab. */
  activeProposalId(): string | undefined {
    const active = api.diffTabs().find((tab) => tab.isActive);
    const id = proposalIdOf(active?.modified);
    return id && this.store.get(id) ? id : undefined;
  }

  /** Whether any pending proposal's diff is on screen. */
  anyVisible(): boolean {
    return api
      .diffTabs()
      .some((tab) => tab.isVisible && this.store.get(proposalIdOf(tab.modified) ?? '') !== undefined);
  }

  /** Whether this proposal's diff is on screen. */
  isVisible(id: string): boolean {
    return api.diffTabs().some((tab) => tab.isVisible && proposalIdOf(tab.modified) === id);
  }

  /** Pending proposals for a file, found from a uri of either scheme. */
  proposalsFor(uri: { scheme: string; query: string; toString(): string }): Proposal[] {
    const id = proposalIdOf(uri);
    if (id) {
      const proposal = this.store.get(id);
      return proposal ? [proposal] : [];
    }
    return this.store.pending().filter((proposal) => sameUri(proposal.uri, uri.toString()));
  }

  /** Recompute the context keys that gate the editor/title buttons. */
  async updateContext(): Promise<void> {
    await api.setContext(CONTEXT_IN_VIEW, this.activeProposalId() !== undefined);
    await api.setContext(CONTEXT_PENDING, this.store.size);
  }
}
