/** The per-hunk decisions kept by the proposal store, drawn on the cards of proposals still waiting. */
import type { ChatEntry } from './messages';

/** The entries with each waiting proposal's hunks marked accepted or rejected as decided so far. */
export function withHunkDecisions(
  entries: ChatEntry[],
  decision: (proposalId: string, index: number) => boolean | undefined,
): ChatEntry[] {
  for (const entry of entries) {
    if (entry.kind !== 'tool' || entry.proposal?.status !== 'pending') {
      continue;
    }
    for (const hunk of entry.proposal.hunks) {
      const decided = decision(entry.proposal.id, hunk.index);
      if (decided !== undefined) {
        hunk.decision = decided ? 'accepted' : 'rejected';
      }
    }
  }
  return entries;
}
