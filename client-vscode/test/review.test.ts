import { beforeEach, describe, expect, it, vi } from 'vitest';

vi.mock('../src/vscodeapi', () => import('./fakeapi'));

import { fake, uri } from './fakeapi';
import { ProposalStore } from '../src/proposals';
import {
  CONTEXT_IN_VIEW,
  CONTEXT_PENDING,
  DiffReview,
  ProposalContentProvider,
  diffTitle,
  proposalDocumentUri,
  proposalIdOf,
} from '../src/review';
import { HunkCodeLensProvider } from '../src/codeLens';
import { makeProposal } from './helpers';

function diffTab(id: string, { active = true } = {}) {
  return {
    original: uri('file', '/work/calc.py'),
    modified: uri('toolgate-proposal', '/work/calc.py', `id=${id}`),
    isActive: active,
    isVisible: active,
    tab: { label: id } as unknown,
  };
}

describe('proposal documents', () => {
  beforeEach(() => fake.reset());

  it('live at the file\'s own path under the toolgate-proposal scheme', () => {
    const proposed = proposalDocumentUri(makeProposal());
    expect(proposed).toMatchObject({ scheme: 'toolgate-proposal', path: '/work/calc.py', query: 'id=p-1' });
    expect(proposalIdOf(proposed)).toBe('p-1');
    expect(proposalIdOf(uri('file', '/work/calc.py'))).toBeUndefined();
  });

  it('serve the proposed text, and nothing as the original of a new file', () => {
    const store = new ProposalStore();
    const proposal = makeProposal();
    store.upsert(proposal);
    const provider = new ProposalContentProvider(store);
    expect(provider.provideTextDocumentContent(proposalDocumentUri(proposal) as never)).toBe(proposal.proposedText);
    expect(provider.provideTextDocumentContent(proposalDocumentUri(proposal, 'original') as never)).toBe('');
    expect(provider.provideTextDocumentContent(uri('toolgate-proposal', '/x', 'id=gone') as never)).toBe('');
  });

  it('tell the editor when a re-based proposal changes', () => {
    const store = new ProposalStore();
    const provider = new ProposalContentProvider(store);
    const seen: unknown[] = [];
    provider.onDidChange((changed) => seen.push(changed));
    provider.refresh(makeProposal());
    expect(seen).toHaveLength(1);
    expect(proposalIdOf(seen[0] as never)).toBe('p-1');
  });
});

describe('DiffReview', () => {
  beforeEach(() => fake.reset());

  it('opens vscode.diff from the current file to the proposed text, titled with tool and path', async () => {
    const store = new ProposalStore();
    const proposal = makeProposal();
    store.upsert(proposal);
    await new DiffReview(store).open(proposal);
    const call = fake.commands.find((c) => c.id === 'vscode.diff');
    expect(call).toBeDefined();
    const [left, right, title, options] = call!.args as [{ scheme: string }, { scheme: string; query: string }, string, unknown];
    expect(left.scheme).toBe('file');
    expect(right.scheme).toBe('toolgate-proposal');
    expect(right.query).toBe('id=p-1');
    expect(title).toBe('write_file: calc.py ↔ proposed');
    expect(options).toEqual({ preview: false });
  });

  it('diffs a new file against an empty original', async () => {
    const store = new ProposalStore();
    const proposal = makeProposal({ isNewFile: true, uri: 'file:///work/new.py' });
    store.upsert(proposal);
    await new DiffReview(store).open(proposal);
    const [left, , title] = fake.commands.find((c) => c.id === 'vscode.diff')!.args as [{ scheme: string; query: string }, unknown, string];
    expect(left).toMatchObject({ scheme: 'toolgate-proposal', query: 'id=p-1&side=original' });
    expect(title).toBe('write_file: new.py (new file) ↔ proposed');
    expect(diffTitle(proposal, 'new.py')).toBe(title);
  });

  it('gates the Accept/Reject buttons on the active tab being a pending proposal\'s diff', async () => {
    const store = new ProposalStore();
    store.upsert(makeProposal());
    const review = new DiffReview(store);
    fake.tabs = [diffTab('p-1')];
    await review.updateContext();
    expect(fake.context.get(CONTEXT_IN_VIEW)).toBe(true);
    expect(fake.context.get(CONTEXT_PENDING)).toBe(1);
    expect(review.activeProposalId()).toBe('p-1');
    expect(review.anyVisible()).toBe(true);

    fake.tabs = [diffTab('p-gone')];
    await review.updateContext();
    expect(fake.context.get(CONTEXT_IN_VIEW)).toBe(false);
    expect(review.anyVisible()).toBe(false);
  });

  it('closes only the tabs of the resolved proposal', async () => {
    const store = new ProposalStore();
    const review = new DiffReview(store);
    const mine = diffTab('p-1');
    const other = diffTab('p-2', { active: false });
    fake.tabs = [mine, other];
    await review.close('p-1');
    expect(fake.closed).toEqual([mine.tab]);
    expect(fake.tabs).toEqual([other]);
  });

  it('finds proposals from a uri of either scheme', () => {
    const store = new ProposalStore();
    store.upsert(makeProposal());
    const review = new DiffReview(store);
    expect(review.proposalsFor(uri('file', '/work/calc.py')).map((p) => p.id)).toEqual(['p-1']);
    expect(review.proposalsFor(uri('toolgate-proposal', '/work/calc.py', 'id=p-1')).map((p) => p.id)).toEqual(['p-1']);
    expect(review.proposalsFor(uri('file', '/work/other.py'))).toEqual([]);
  });
});

describe('HunkCodeLensProvider', () => {
  beforeEach(() => fake.reset());

  it('puts lenses on the edited file and on the proposed text, and refreshes on change', () => {
    const store = new ProposalStore();
    const provider = new HunkCodeLensProvider(store);
    let refreshed = 0;
    provider.onDidChangeCodeLenses(() => refreshed++);
    store.upsert(makeProposal());
    expect(refreshed).toBe(1);
    const onFile = provider.provideCodeLenses({ uri: uri('file', '/work/calc.py') });
    expect(onFile).toHaveLength(4);
    expect(onFile[0]).toMatchObject({
      range: { start: { line: 1 } },
      command: { title: '$(check) Accept hunk 1/2', command: 'toolgate-vscode.acceptHunk', arguments: ['p-1', 0] },
    });
    const onProposed = provider.provideCodeLenses({ uri: uri('toolgate-proposal', '/work/calc.py', 'id=p-1') });
    expect(onProposed).toHaveLength(4);
    expect(provider.provideCodeLenses({ uri: uri('toolgate-proposal', '/work/calc.py', 'id=p-1&side=original') })).toEqual([]);
    expect(provider.provideCodeLenses({ uri: uri('file', '/work/other.py') })).toEqual([]);
  });

  it('shows no lenses on the (empty) current side of a new file', () => {
    const store = new ProposalStore();
    store.upsert(makeProposal({ isNewFile: true }));
    expect(new HunkCodeLensProvider(store).provideCodeLenses({ uri: uri('file', '/work/calc.py') })).toEqual([]);
  });
});
