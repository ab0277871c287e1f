/** Pending proposals as the client knows them, and the per-hunk decisions made in CodeLens. */
import type { Proposal, ProposalResolved } from './protocol';
import { isResolved } from './protocol';

/** A listener for store changes. */
export type Listener = () => void;

/** What a hunk decision leads to: wait for more decisions, or send the final answer. */
export type HunkOutcome =
  | { done: false }
  | { done: true; accepted: number[] };

/** The proposals the server has sent that still wait for a decision. */
export class ProposalStore {
  private readonly proposals = new Map<string, Proposal>();
  private readonly decisions = new Map<string, Map<number, boolean>>();
  private readonly listeners = new Set<Listener>();

  /** Subscribe to changes; returns the unsubscribe function. */
  onDidChange(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Add or replace a proposal (the server re-sends the same id after a re-base). Returns true when new. */
  upsert(proposal: Proposal): boolean {
    const isNew = !this.proposals.has(proposal.id);
    if (isResolved(proposal.status)) {
      this.remove(proposal.id);
      return false;
    }
    if (!isNew) {
      // A re-based proposal may have different hunks: earlier per-hunk choices no longer apply.
      this.decisions.delete(proposal.id);
    }
    this.proposals.set(proposal.id, proposal);
    this.fire();
    return isNew;
  }

  /** Apply a toolgate/proposalResolved notification; returns the proposal it resolved, if known. */
  resolve(resolved: ProposalResolved): Proposal | undefined {
    const proposal = this.proposals.get(resolved.id);
    this.remove(resolved.id);
    return proposal;
  }

  /** Replace the whole set (from toolgate.listProposals). */
  replaceAll(proposals: Proposal[]): void {
    this.proposals.clear();
    this.decisions.clear();
    for (const proposal of proposals) {
      if (!isResolved(proposal.status)) {
        this.proposals.set(proposal.id, proposal);
      }
    }
    this.fire();
  }

  /** Forget everything (the server went away). */
  clear(): void {
    this.proposals.clear();
    this.decisions.clear();
    this.fire();
  }

  get(id: string): Proposal | undefined {
    return this.proposals.get(id);
  }

  /** Pending proposals, oldest first. */
  pending(): Proposal[] {
    return [...this.proposals.values()];
  }

  /** Pending proposals for one document uri. */
  forUri(uri: string): Proposal[] {
    return this.pending().filter((proposal) => sameUri(proposal.uri, uri));
  }

  get size(): number {
    return this.proposals.size;
  }

  /** The decision recorded for a hunk: true accepted, false rejected, undefined open. */
  hunkDecision(id: string, index: number): boolean | undefined {
    return this.decisions.get(id)?.get(index);
  }

  /**
   * Record a decision on one hunk. When every hunk has one, the proposal is decided:
   * the accepted hunk indexes are returned (empty means reject the proposal).
   */
  decideHunk(id: string, index: number, accept: boolean): HunkOutcome {
    const proposal = this.proposals.get(id);
    if (!proposal || !proposal.hunks.some((hunk) => hunk.index === index)) {
      return { done: false };
    }
    let decisions = this.decisions.get(id);
    if (!decisions) {
      decisions = new Map();
      this.decisions.set(id, decisions);
    }
    decisions.set(index, accept);
    this.fire();
    if (proposal.hunks.every((hunk) => decisions.has(hunk.index))) {
      const accepted = proposal.hunks
        .filter((hunk) => decisions.get(hunk.index) === true)
        .map((hunk) => hunk.index);
      return { done: true, accepted };
    }
    return { done: false };
  }

  private remove(id: string): void {
    const had = this.proposals.delete(id);
    this.decisions.delete(id);
    if (had) {
      this.fire();
    }
  }

  private fire(): void {
    for (const listener of [...this.listeners]) {
      listener();
    }
  }
}

/** Compare two uri strings, tolerating the percent-encoding differences between clients. */
export function sameUri(a: string, b: string): boolean {
  if (a === b) {
    return true;
  }
  try {
    return decodeURIComponent(a) === decodeURIComponent(b);
  } catch {
    return false;
  }
}

/** Which side of the diff a proposal document shows. */
export type Side = 'proposed' | 'original';

/** The query part of a proposal document's uri. */
export function proposalQuery(id: string, side: Side = 'proposed'): string {
  const base = `id=${encodeURIComponent(id)}`;
  return side === 'proposed' ? base : `${base}&side=original`;
}

/** Read the proposal id and side back from a proposal document's uri query. */
export function parseProposalQuery(query: string): { id: string; side: Side } | undefined {
  const params = new URLSearchParams(query);
  const id = params.get('id');
  if (!id) {
    return undefined;
  }
  return { id, side: params.get('side') === 'original' ? 'original' : 'proposed' };
}

/** One CodeLens to show, in editor-independent terms. */
export interface LensSpec {
  line: number;
  title: string;
  command: 'toolgate-vscode.acceptHunk' | 'toolgate-vscode.rejectHunk';
  args: [string, number];
}

/** The 0-based line where a hunk starts on the proposed side, from its `@@ -a,b +c,d @@` header. */
export function proposedStartLine(header: string, fallback: number): number {
  const match = /^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@/.exec(header);
  if (!match) {
    return fallback;
  }
  const start = Number.parseInt(match[1], 10);
  const count = match[2] === undefined ? 1 : Number.parseInt(match[2], 10);
  // A hunk that only deletes lines has count 0 and names the line before the gap.
  return Math.max(0, count === 0 ? start : start - 1);
}

/** CodeLenses for every hunk of a proposal: on the current document, or on the proposed text. */
export function hunkLenses(
  proposal: Proposal,
  side: 'current' | 'proposed',
  decision: (index: number) => boolean | undefined,
): LensSpec[] {
  const many = proposal.hunks.length > 1;
  const lenses: LensSpec[] = [];
  for (const hunk of proposal.hunks) {
    const line =
      side === 'current' ? hunk.range.start.line : proposedStartLine(hunk.header, hunk.range.start.line);
    const label = many ? ` ${hunk.index + 1}/${proposal.hunks.length}` : '';
    const decided = decision(hunk.index);
    const args: [string, number] = [proposal.id, hunk.index];
    lenses.push({
      line,
      title: decided === true ? `$(check) Hunk${label} accepted` : `$(check) Accept hunk${label}`,
      command: 'toolgate-vscode.acceptHunk',
      args,
    });
    lenses.push({
      line,
      title: decided === false ? `$(close) Hunk${label} rejected` : `$(close) Reject hunk${label}`,
      command: 'toolgate-vscode.rejectHunk',
      args,
    });
  }
  return lenses;
}
