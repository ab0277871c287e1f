import { describe, expect, it } from 'vitest';
import {
  ProposalStore,
  hunkLenses,
  parseProposalQuery,
  proposalQuery,
  proposedStartLine,
  sameUri,
} from '../src/proposals';
import { makeProposal } from './helpers';

describe('ProposalStore', () => {
  it('adds, re-sends and resolves proposals, telling listeners each time', () => {
    const store = new ProposalStore();
    let changes = 0;
    store.onDidChange(() => changes++);
    expect(store.upsert(makeProposal())).toBe(true);
    expect(store.upsert(makeProposal({ proposedText: 're-based' }))).toBe(false);
    expect(store.get('p-1')?.proposedText).toBe('re-based');
    expect(store.size).toBe(1);
    const resolved = store.resolve({ id: 'p-1', status: 'accepted', hunksApplied: [0, 1] });
    expect(resolved?.id).toBe('p-1');
    expect(store.size).toBe(0);
    expect(changes).toBe(3);
  });

  it('does not keep a proposal that arrives already resolved', () => {
    const store = new ProposalStore();
    store.upsert(makeProposal());
    expect(store.upsert(makeProposal({ status: 'stale' }))).toBe(false);
    expect(store.get('p-1')).toBeUndefined();
  });

  it('finds proposals by document, tolerating percent-encoding', () => {
    const store = new ProposalStore();
    store.upsert(makeProposal({ id: 'a', uri: 'file:///work/my%20file.py' }));
    store.upsert(makeProposal({ id: 'b', uri: 'file:///work/other.py' }));
    expect(store.forUri('file:///work/my file.py').map((p) => p.id)).toEqual(['a']);
    expect(sameUri('file:///a%2Bb', 'file:///a+b')).toBe(true);
  });

  it('decides a proposal once every hunk has a decision', () => {
    const store = new ProposalStore();
    store.upsert(makeProposal());
    expect(store.decideHunk('p-1', 1, false)).toEqual({ done: false });
    expect(store.hunkDecision('p-1', 1)).toBe(false);
    expect(store.decideHunk('p-1', 0, true)).toEqual({ done: true, accepted: [0] });
  });

  it('ignores decisions on unknown hunks and forgets decisions when a proposal is re-based', () => {
    const store = new ProposalStore();
    store.upsert(makeProposal());
    expect(store.decideHunk('p-1', 9, true)).toEqual({ done: false });
    expect(store.decideHunk('nope', 0, true)).toEqual({ done: false });
    store.decideHunk('p-1', 0, true);
    store.upsert(makeProposal());
    expect(store.hunkDecision('p-1', 0)).toBeUndefined();
  });

  it('replaces everything from listProposals', () => {
    const store = new ProposalStore();
    store.upsert(makeProposal({ id: 'old' }));
    store.replaceAll([makeProposal({ id: 'x' }), makeProposal({ id: 'y', status: 'rejected' })]);
    expect(store.pending().map((p) => p.id)).toEqual(['x']);
  });
});

describe('proposal document uris', () => {
  it('round-trips id and side', () => {
    expect(parseProposalQuery(proposalQuery('p-1'))).toEqual({ id: 'p-1', side: 'proposed' });
    expect(parseProposalQuery(proposalQuery('p &2', 'original'))).toEqual({ id: 'p &2', side: 'original' });
    expect(parseProposalQuery('side=original')).toBeUndefined();
  });
});

describe('hunk lenses', () => {
  it('reads the proposed start line from the hunk header', () => {
    expect(proposedStartLine('@@ -4,2 +4,3 @@', 0)).toBe(3);
    expect(proposedStartLine('@@ -2 +2 @@ def add', 0)).toBe(1);
    expect(proposedStartLine('@@ -5,2 +4,0 @@', 0)).toBe(4);
    expect(proposedStartLine('not a header', 7)).toBe(7);
  });

  it('puts an accept and a reject lens on each hunk, numbered when there are several', () => {
    const proposal = makeProposal();
    const lenses = hunkLenses(proposal, 'current', () => undefined);
    expect(lenses.map((lens) => [lens.line, lens.command, lens.title])).toEqual([
      [1, 'toolgate-vscode.acceptHunk', '$(check) Accept hunk 1/2'],
      [1, 'toolgate-vscode.rejectHunk', '$(close) Reject hunk 1/2'],
      [5, 'toolgate-vscode.acceptHunk', '$(check) Accept hunk 2/2'],
      [5, 'toolgate-vscode.rejectHunk', '$(close) Reject hunk 2/2'],
    ]);
    expect(lenses[2].args).toEqual(['p-1', 1]);
    const proposed = hunkLenses(proposal, 'proposed', () => undefined);
    expect(proposed.map((lens) => lens.line)).toEqual([1, 1, 5, 5]);
  });

  it('shows decisions already made', () => {
    const proposal = makeProposal({ hunks: [makeProposal().hunks[0]] });
    const [accept, reject] = hunkLenses(proposal, 'current', () => true);
    expect(accept.title).toBe('$(check) Hunk accepted');
    expect(reject.title).toBe('$(close) Reject hunk');
  });
});
