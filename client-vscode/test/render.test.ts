import { describe, expect, it, vi } from 'vitest';

vi.mock('../src/vscodeapi', () => import('./fakeapi'));

import { escapeHtml } from '../src/webview/html';
import {
  matchCommands,
  renderCustomization,
  renderEntry,
  renderMarkdown,
  renderSessionOptions,
  renderSlashMenu,
  slashQuery,
  statusText,
  testSummaryText,
} from '../src/webview/render';
import { chatHtml } from '../src/chat/chatView';
import { proposalCard } from '../src/chat/conversation';
import { VIEW_COMMANDS, type ChatEntry, type PlanCard, type SlashCommand } from '../src/chat/messages';
import { makeProposal } from './helpers';


function tool(overrides: Partial<Extract<ChatEntry, { kind: 'tool' }>>): ChatEntry {
  return { kind: 'tool', key: 'k', callId: 'c1', name: 'read_file', toolKind: 'read', target: 'calc.py', status: 'ok', ...overrides };
}

describe('markdown', () => {
  it('renders the model\'s markdown and shows raw HTML as text', () => {
    const html = renderMarkdown('**bold** `code`\n\n<img src=x onerror=alert(1)><script>alert(1)</script>');
    expect(html).toContain('<strong>bold</strong>');
    expect(html).toContain('<code>code</code>');
    expect(html).not.toContain('<img');
    expect(html).not.toContain('<script');
    expect(html).toContain('&lt;script&gt;');
  });

  it('drops javascript: links', () => {
    expect(renderMarkdown('[x](javascript:alert(1))')).not.toContain('href="javascript');
  });

  it('escapes the person\'s own text', () => {
    const html = renderEntry({ kind: 'user', key: 'u', text: '<b>hi</b> & "you"' });
    expect(html).toContain('&lt;b&gt;hi&lt;/b&gt; &amp; &quot;you&quot;');
    expect(escapeHtml("'")).toBe('&#39;');
  });
});

describe('cards', () => {
  it('draws a call as a row that opens on its arguments, its result and its duration', () => {
    const html = renderEntry(tool({ arguments: { path: 'calc.py', start_line: 2 }, result: 'def add(a, b):', durationMs: 1234 }));
    expect(html).toMatch(/^<details class="entry tool row read" data-key="k" data-fold="tool" title="call c1">/);
    expect(html).toContain('<code class="tool-target">calc.py</code>');
    expect(html).toContain('<span class="tool-duration">1.2 s</span>');
    expect(html).toContain('codicon-file');
    expect(html).toContain('codicon-pass');
    // The arguments as highlighted JSON, the result as text, the duration in words.
    expect(html).toContain('Arguments');
    expect(html).toContain('<span class="hljs-attr">&quot;start_line&quot;</span>');
    expect(html).toContain('<pre class="tool-result">def add(a, b):</pre>');
    expect(html).toContain('Took 1.2 s');
  });

  it('shows a failed call\'s error as its result, and a running call as running', () => {
    const failed = renderEntry(tool({ status: 'failed', summary: 'no such file: <x>' }));
    expect(failed).toContain('>Error<');
    expect(failed).toContain('<pre class="tool-result failed">no such file: &lt;x&gt;</pre>');
    expect(failed).toContain('codicon-error');
    const running = renderEntry(tool({ status: 'running' }));
    expect(running).toContain('codicon-loading codicon-modifier-spin');
    expect(running).toContain('Running…');
    expect(running).not.toContain('Took');
  });

  it('marks a row by the kind the server sent, not by the tool\'s name', () => {
    const named = renderEntry(tool({ name: 'write_file', toolKind: 'read' }));
    expect(named).toMatch(/^<details class="entry tool row read"/);
    const change = renderEntry(tool({ name: 'read_file', toolKind: 'change', status: 'denied' }));
    expect(change).toMatch(/^<details class="entry tool row"/);
    expect(change).toContain('codicon-edit');
    const untold = renderEntry(tool({ toolKind: undefined }));
    expect(untold).toMatch(/^<details class="entry tool row"/);
    expect(untold).toContain('codicon-tools');
  });

  it('shows a pending proposal with file, +/- summary, the reason, its hunks inline, per-hunk and whole buttons', () => {
    const entry = tool({ name: 'write_file', status: 'waiting', proposal: proposalCard(makeProposal(), 'calc.py') });
    const html = renderEntry(entry);
    expect(html).toContain('<span class="path">calc.py</span>');
    expect(html).toContain('+3');
    expect(html).toContain('−2');
    expect(html).toContain('add subtracts');
    expect(html).toMatch(/data-action="openDiff" data-id="p-1"><span class="codicon codicon-diff" aria-hidden="true"><\/span>Open Diff</);
    expect(html).toMatch(/data-action="accept" data-id="p-1">.*?Accept</);
    expect(html).toMatch(/data-action="reject" data-id="p-1">.*?Reject…</);
    // The change itself: each hunk's lines, numbered from where it starts, highlighted as Python.
    expect(html.match(/class="hunk"/g)).toHaveLength(2);
    expect(html).toContain('<div class="diff-line removed"><span class="diff-number">2</span>');
    expect(html).toContain('<span class="hljs-keyword">return</span> a + b');
    // Accept and Reject per hunk, as the diff editor's CodeLens offers them.
    expect(html).toContain('data-action="acceptHunk" data-id="p-1" data-hunk="0"');
    expect(html).toContain('data-action="rejectHunk" data-id="p-1" data-hunk="1"');
    expect(html).not.toContain('checkbox');
  });

  it('marks the hunks already decided and says the whole Accept takes the others', () => {
    const card = proposalCard(makeProposal(), 'calc.py');
    card.hunks[0].decision = 'rejected';
    const html = renderEntry(tool({ status: 'waiting', proposal: card }));
    expect(html).toContain('<div class="hunk decided rejected" data-hunk-index="0">');
    expect(html).not.toContain('data-action="acceptHunk" data-id="p-1" data-hunk="0"');
    expect(html).toContain('data-action="acceptHunk" data-id="p-1" data-hunk="1"');
    expect(html).toContain('Accept the other hunk');
  });

  it('has no per-hunk buttons for a one-hunk proposal and no buttons once decided', () => {
    const one = makeProposal({ hunks: [makeProposal().hunks[0]] });
    const single = renderEntry(tool({ proposal: proposalCard(one, 'calc.py') }));
    expect(single).not.toContain('acceptHunk');
    expect(single).toContain('diff-line added');
    const decided = { ...proposalCard(one, 'calc.py'), status: 'rejected', reason: 'Reason: keep it' };
    const html = renderEntry(tool({ status: 'rejected', proposal: decided }));
    expect(html).not.toContain('data-action="accept"');
    expect(html).toContain('Reason: keep it');
    // Once decided the change folds away, still there to open.
    expect(html).toContain('<details class="diff-fold"><summary>The change</summary>');
    // Drawn from a stored transcript: no hunks, so no counts and no change.
    const stored = renderEntry(tool({ proposal: { ...decided, hunks: [] } }));
    expect(stored).not.toContain('class="added"');
    expect(stored).not.toContain('diff-fold');
  });

  it('names the problems the change caused, as the model reads them, and nothing when there are none', () => {
    const decided = { ...proposalCard(makeProposal(), 'calc.ts'), status: 'accepted' };
    expect(renderEntry(tool({ proposal: decided }))).not.toContain('change-problems');
    const problems = [{ path: 'calc.ts', line: 2, source: 'ts', message: "Cannot find name '<c>'.", severity: 'error' }];
    const html = renderEntry(tool({ proposal: { ...decided, problems } }));
    expect(html).toContain('New problems after this change');
    expect(html).toContain('calc.ts:2 ts Cannot find name &#39;&lt;c&gt;&#39;.');
  });

  it('shows a test run\'s summary with a link to Problems when something failed', () => {
    const summary = { total: 3, passed: 2, failed: 1, skipped: 0, errors: 0, duration_seconds: 0.2 };
    const html = renderEntry(tool({ name: 'run_tests', target: '', tests: summary }));
    expect(html).toContain('2 passed, 1 failed');
    expect(html).toContain('data-action="showProblems"');
    const passing = renderEntry(tool({ name: 'run_tests', target: '', tests: { ...summary, passed: 3, failed: 0 } }));
    expect(passing).not.toContain('showProblems');
    expect(testSummaryText({ ...summary, errors: 2, skipped: 1 })).toBe('2 passed, 1 failed, 2 errors, 1 skipped');
  });
});

describe('run ends and plans', () => {
  function plan(overrides: Partial<PlanCard> = {}): ChatEntry {
    return {
      kind: 'plan',
      key: 'plan-p-1',
      plan: {
        planId: 'p-1',
        goal: 'Publish <the> README',
        status: 'partial',
        steps: [
          { stepId: 'read', capability: 'fs.read', tool: 'read_file' },
          {
            stepId: 'render',
            capability: 'docs.render',
            tool: null,
            gap: { reason: 'no_capability_match', message: 'no tool provides docs.render', toolName: 'docs_render' },
          },
        ],
        ...overrides,
      },
    };
  }

  it('offers to undo a run that changed files, and says when it is undone', () => {
    const end: ChatEntry = { kind: 'run', key: 'run-r-1', runId: 'r-1', status: 'completed', files: ['calc.py'], undo: 'available' };
    const html = renderEntry(end);
    expect(html).toContain('Run completed — changed <code>calc.py</code>');
    expect(html).toContain('data-action="undoRun" data-run="r-1"');
    const undone = renderEntry({ ...end, undo: 'undone', undoNote: 'Put back calc.py.' });
    expect(undone).not.toContain('undoRun');
    expect(undone).toContain('undone');
    expect(undone).toContain('Put back calc.py.');
    expect(renderEntry({ ...end, files: [], undo: 'none' })).not.toContain('undoRun');
  });

  it('offers to undo an undo as a redo of the run it undid', () => {
    const end: ChatEntry = { kind: 'run', key: 'run-u-1', runId: 'u-1', status: 'completed', files: ['calc.py'], undo: 'available', undoes: 'r-1' };
    const html = renderEntry(end);
    // The run it undid in words; the ids only in the tooltip.
    expect(html).toContain('Undid an earlier run — put back <code>calc.py</code>');
    expect(html).toContain('title="undo u-1 of run r-1"');
    expect(html.replace(/title="[^"]*"/g, '').replace(/data-[a-z]+="[^"]*"/g, '')).not.toMatch(/[ru]-1/);
    const at = new Date(2026, 0, 1, 14, 2).getTime();
    expect(renderEntry({ ...end, undoesStartedAt: at })).toContain('Undid the run at 14:02');
    expect(renderEntry({ ...end, undoesStartedAt: at, undoesAnUndo: true })).toContain('Undid the undo at 14:02');
    expect(html).toContain('data-action="undoRun" data-run="u-1"');
    expect(html).toContain('Redo (undo the undo)');
    expect(html).not.toContain('Undo this run');
  });

  it('shows a partial plan: steps with capability and tool, the gap marked with its scaffold action, no Approve', () => {
    const html = renderEntry(plan());
    expect(html).toContain('Publish &lt;the&gt; README');
    expect(html).toContain('partial — has gaps, does not run');
    expect(html).toContain('<span class="capability">fs.read</span> <span class="tool">→ <code>read_file</code></span>');
    expect(html).toContain('gap: no tool');
    expect(html).toContain('no tool provides docs.render (no matching tool)');
    expect(html).toContain('data-action="scaffold" data-plan="p-1" data-step="render"');
    expect(html).toContain('Scaffold missing tool docs_render');
    expect(html).toContain('data-action="dropPlan"');
    expect(html).not.toContain('approvePlan');
  });

  it('offers no scaffold for a step that names no capability', () => {
    const card = plan();
    if (card.kind === 'plan') {
      card.plan.steps[1] = {
        stepId: 'render',
        capability: 'tool',
        tool: null,
        gap: { reason: 'invalid_capability', message: "'tool' is not a capability name", toolName: 'tool' },
      };
    }
    const html = renderEntry(card);
    expect(html).toContain('&#39;tool&#39; is not a capability name (invalid capability)');
    expect(html).not.toContain('data-action="scaffold"');
    expect(html).toContain('data-action="dropPlan"');
  });

  it('allows Approve on a ready plan, or once every gap is scaffolded, and no buttons once decided', () => {
    const ready = renderEntry(plan({ status: 'ready', steps: [{ stepId: 'read', capability: 'fs.read', tool: 'read_file' }] }));
    expect(ready).toContain('data-action="approvePlan" data-plan="p-1"');
    expect(ready).toContain('>ready<');
    const card = plan();
    if (card.kind === 'plan') {
      card.plan.steps[1].gap!.scaffolded = 'tools/docs_render';
    }
    const scaffolded = renderEntry(card);
    expect(scaffolded).toContain('data-action="approvePlan"');
    expect(scaffolded).toContain('scaffolded in tools/docs_render');
    expect(scaffolded).not.toContain('data-action="scaffold"');
    expect(scaffolded).not.toContain('gap-detail');
    const dropped = renderEntry(plan({ decision: 'dropped' }));
    expect(dropped).not.toContain('data-action=');
    expect(dropped).toContain('dropped');
    expect(renderEntry(plan({ decision: 'approved', runId: 'w-1' }))).toContain('<div class="reason" title="run w-1">Running…</div>');
  });

  it('says how an approved plan\'s run ended, in the words of the run\'s line', () => {
    const ran = (runStatus: string) => renderEntry(plan({ decision: 'approved', runId: 'w-1', runStatus }));
    expect(ran('completed')).toContain('Ran — completed');
    expect(ran('completed')).not.toContain('Running as');
    expect(ran('failed')).toContain('Ran — failed');
    expect(ran('cancelled')).toContain('Ran — cancelled');
    expect(ran('max_steps')).toContain('Ran — max steps');
    expect(ran('<b>')).toContain('Ran — &lt;b&gt;');
    const end: ChatEntry = { kind: 'run', key: 'run-w-1', runId: 'w-1', status: 'cancelled', files: [], undo: 'none' };
    expect(renderEntry(end)).toContain('Run cancelled');
  });
});

describe('status and sessions', () => {
  it('says what the run does', () => {
    expect(statusText({ state: 'running', detail: 'write_file' })).toBe('Working: write_file…');
    expect(statusText({ state: 'idle', detail: 'cancelled' })).toBe('Ready — last run cancelled');
    expect(statusText({ state: 'starting' })).toBe('Starting the server…');
    expect(statusText({ state: 'planning' })).toBe('Making a plan…');
  });

  it('lists the sessions with the current one selected', () => {
    const html = renderSessionOptions({
      sessionId: 's-2',
      title: 'Fix <add>',
      sessions: [
        { id: 's-2', title: 'Fix <add>', turns: 2, lastActivity: '' },
        { id: 's-1', title: 'Older', turns: 1, lastActivity: '' },
      ],
      entries: [],
      status: { state: 'idle' },
      commands: [],
      customization: { open: false, loading: false },
    });
    expect(html).toBe(
      '<option value="s-2" selected>Fix &lt;add&gt; (2 turns)</option><option value="s-1">Older (1 turn)</option>',
    );
  });
});

describe('the page', () => {
  it('allows only its own script (by nonce) and stylesheet', () => {
    const html = chatHtml('vscode-resource:', 'vscode-resource:/dist/webview.js', 'vscode-resource:/media/chat.css', 'abc123');
    expect(html).toContain(
      "default-src 'none'; style-src vscode-resource:; img-src vscode-resource: data:; font-src vscode-resource:; script-src 'nonce-abc123'",
    );
    expect(html).toContain('<script nonce="abc123" src="vscode-resource:/dist/webview.js"></script>');
    expect(html.match(/<script/g)).toHaveLength(1);
    expect(html).not.toMatch(/apiKey|api key/i);
  });
});

describe('the turn header', () => {
  it('names the rules files the turn used', () => {
    const html = renderEntry({ kind: 'user', key: 'u', text: 'fix add', runId: 'r-1', rules: ['AGENTS.md', '<x>.md'] });
    expect(html).toContain('<span class="rules" title="Rules files this turn used">rules: <code>AGENTS.md</code>, <code>&lt;x&gt;.md</code></span>');
    expect(renderEntry({ kind: 'user', key: 'u', text: 'fix add' })).not.toContain('rules');
  });
});

describe('the / menu', () => {
  const commands: SlashCommand[] = [
    ...VIEW_COMMANDS,
    { name: 'fix-issue', description: 'Fix a <numbered> issue', argumentHint: 'NUMBER', source: '.claude/commands/fix-issue.md' },
    { name: 'project:review', description: 'Our review', source: '.claude/commands/review.md' },
  ];

  it('opens for a / at the start, until a space', () => {
    expect(slashQuery('/')).toBe('');
    expect(slashQuery('/fi')).toBe('fi');
    expect(slashQuery('/fix-issue 42')).toBeUndefined();
    expect(slashQuery('fix /x')).toBeUndefined();
    expect(slashQuery(' /x')).toBeUndefined();
  });

  it('lists names starting with the query first, then names that hold it', () => {
    expect(matchCommands(commands, '').map((c) => c.name)).toEqual(commands.map((c) => c.name));
    expect(matchCommands(commands, 're').map((c) => c.name)).toEqual(['review', 'project:review']);
    expect(matchCommands(commands, 'FIX').map((c) => c.name)).toEqual(['fix-issue']);
    expect(matchCommands(commands, 'zzz')).toEqual([]);
  });

  it('shows each command with its argument hint, description and file, the highlighted one selected', () => {
    const html = renderSlashMenu(matchCommands(commands, 'fi'), 0);
    expect(html).toContain('<span class="slash-name">/fix-issue</span> <span class="slash-hint">NUMBER</span>');
    expect(html).toContain('Fix a &lt;numbered&gt; issue');
    expect(html).toContain('<span class="slash-source">.claude/commands/fix-issue.md</span>');
    expect(html).toContain('class="slash-item selected" role="option" id="slash-0" data-index="0" aria-selected="true"');
    const two = renderSlashMenu(matchCommands(commands, 're'), 1);
    expect(two.match(/aria-selected="true"/g)).toHaveLength(1);
    expect(two).toContain('id="slash-1" data-index="1" aria-selected="true"');
    // A built-in names no file.
    expect(two).not.toContain('<span class="slash-source">built-in');
    expect(renderSlashMenu([], 0)).toContain('No command matches');
  });
});

describe('the Customization panel', () => {
  it('lists what was found and where it came from, hooks with their trust state, and the problems', () => {
    const html = renderCustomization({
      open: true,
      loading: false,
      data: {
        rules: [
          { file: 'AGENTS.md', applies: 'always', source: 'workspace' },
          { file: '.cursor/rules/api.mdc', applies: 'globs', source: 'workspace' },
        ],
        skills: [{ name: 'release-notes', description: 'Write release notes', file: '.agents/skills/release-notes/SKILL.md', source: 'workspace' }],
        commands: [{ name: 'fix-issue', description: 'Fix a numbered issue', argumentHint: 'NUMBER', file: '.claude/commands/fix-issue.md', source: 'workspace' }],
        hooks: [
          { event: 'PreToolUse', matcher: 'Edit|Write', command: 'scripts/check.sh', source: '/w/.claude/settings.json', trusted: false },
          { event: 'PostToolUse', matcher: '', command: 'ruff format', source: 'toolgate.toml', trusted: true },
        ],
        mcpServers: [{ name: 'docs', source: '/w/.mcp.json', state: 'waits for your confirmation' }],
        problems: ['/w/.agents/skills/bad/SKILL.md: description: a required field, missing'],
        notices: ['/undo is a built-in command; undo.md is /project:undo'],
      },
    });
    for (const part of [
      '<code>AGENTS.md</code> — always',
      '<code>.cursor/rules/api.mdc</code> — for matching files',
      '<b>release-notes</b> — Write release notes',
      '<b>/fix-issue</b> <span class="slash-hint">NUMBER</span> — Fix a numbered issue <code>.claude/commands/fix-issue.md</code>',
      'runs <code>scripts/check.sh</code> <span class="badge untrusted">waits for your confirmation</span>',
      'runs <code>ruff format</code> <span class="badge trusted">runs</span>',
      '<b>docs</b> — waits for your confirmation <span class="custom-source">/w/.mcp.json</span>',
      'SKILL.md: description: a required field, missing',
      '/project:undo',
      'data-action="refreshCustomization"',
    ]) {
      expect(html).toContain(part);
    }
    expect(html).toContain('Rules <span class="badge">2</span>');
  });

  it('says what it lacks, and why a refresh failed', () => {
    const empty = renderCustomization({
      open: true,
      loading: false,
      data: { rules: [], skills: [], commands: [], hooks: [], mcpServers: [], problems: [], notices: [] },
    });
    expect(empty).toContain('No rules file');
    expect(empty).not.toContain('Problems and notices');
    expect(renderCustomization({ open: true, loading: true })).toContain('reading…');
    expect(renderCustomization({ open: true, loading: false, error: 'Could not read <it>' })).toContain('Could not read &lt;it&gt;');
  });
});
