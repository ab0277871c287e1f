/** "Accept hunk" / "Reject hunk" CodeLenses on the edited file and on the proposed text. */
import * as api from './vscodeapi';
import { PROPOSAL_SCHEME } from './protocol';
import type { ProposalStore } from './proposals';
import { hunkLenses, parseProposalQuery, sameUri } from './proposals';

/** Provides one pair of lenses per hunk of every pending proposal of a document. */
export class HunkCodeLensProvider implements api.CodeLensProvider {
  private readonly changed = api.newEventEmitter<void>();
  readonly onDidChangeCodeLenses = this.changed.event;
  private readonly unsubscribe: () => void;

  constructor(private readonly store: ProposalStore) {
    this.unsubscribe = store.onDidChange(() => this.changed.fire());
  }

  provideCodeLenses(document: { uri: { scheme: string; query: string; toString(): string } }): api.CodeLens[] {
    const { uri } = document;
    const decision = (id: string) => (index: number) => this.store.hunkDecision(id, index);
    if (uri.scheme === PROPOSAL_SCHEME) {
      const parsed = parseProposalQuery(uri.query);
      const proposal = parsed && parsed.side === 'proposed' ? this.store.get(parsed.id) : undefined;
      if (!proposal) {
        return [];
      }
      return hunkLenses(proposal, 'proposed', decision(proposal.id)).map((lens) =>
        api.makeCodeLens(lens.line, lens.title, lens.command, lens.args),
      );
    }
    const text = uri.toString();
    return this.store
      .pending()
      .filter((proposal) => !proposal.isNewFile && sameUri(proposal.uri, text))
      .flatMap((proposal) => hunkLenses(proposal, 'current', decision(proposal.id)))
      .map((lens) => api.makeCodeLens(lens.line, lens.title, lens.command, lens.args));
  }

  dispose(): void {
    this.unsubscribe();
    this.changed.dispose();
  }
}
