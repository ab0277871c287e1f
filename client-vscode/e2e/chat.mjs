// The chat view, end to end: type a task, see the streamed answer, accept one proposal from its
// card and reject another with a reason; then the order of a person who runs the tests after a
// finished run (Toolgate: Run Tests → the failure in Problems); a follow-up that depends on the
// first turn (the scripted model checks that turn is in its messages); reload the window and
// find the session again.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { answerInputBox, runCommand, waitUntil } from './codeserver.mjs';

export const CHAT_TASK = 'Make the tests in test_calc.py pass';
export const CHAT_REASON = 'Keep mul as it is for now';
const FOLLOW_UP = 'Good. What is left to do after the first turn?';
const FIRST_ANSWER = 'add is fixed; I left mul as it was, as you asked.';
const SECOND_ANSWER = 'Following up on the first turn: mul is next.';

/** A file long enough that two changes to it are two hunks: one accepted, one rejected on the card. */
const NOTES = Array.from({ length: 20 }, (_, i) => `NOTE_${i + 1} = ${i + 1}`).join('\n') + '\n';
const NOTES_PROPOSED = NOTES.replace('NOTE_2 = 2', 'NOTE_2 = 200').replace('NOTE_19 = 19', 'NOTE_19 = 1900');
const HUNKS_TASK = 'Scale NOTE_2 and NOTE_19 in notes.py';

/** The chat workspace's own files: a rules file, a prompt file of Claude Code's format, and notes.py. */
export const CHAT_FILES = {
  'AGENTS.md': '# Conventions\n\nKeep calc.py free of imports.\n',
  'notes.py': NOTES,
  '.claude/commands/fix-issue.md':
    '---\ndescription: Fix a numbered issue the project\'s way\nargument-hint: NUMBER\n---\n' +
    'Fix issue #$ARGUMENTS: find its failing test first, then change the code.\n',
};
/** What the prompt file makes of `/fix-issue 42`: the model must read this, not the command. */
const EXPANDED_COMMAND = 'Fix issue #42: find its failing test first, then change the code.';
const COMMAND_ANSWER = 'Issue 42: the failing test is test_mul.';

/** The model's turns: two write_file calls (accepted, rejected), an answer, the follow-up's answer, the prompt command's answer. */
export function chatScript({ accepted, rejected }) {
  return [
    // A read first: its row opens on its arguments and what it read.
    { content: '', tool_calls: [{ name: 'read_file', arguments: { path: 'calc.py' } }] },
    {
      content: '`add` subtracts; I will fix it.',
      tool_calls: [
        { name: 'write_file', arguments: { path: 'calc.py', content: accepted, _reasoningForCall: 'add subtracts instead of adding' } },
      ],
    },
    {
      content: 'Now mul.',
      tool_calls: [
        { name: 'write_file', arguments: { path: 'calc.py', content: rejected, _reasoningForCall: 'mul adds instead of multiplying' } },
      ],
    },
    { content: 'Running the tests.', tool_calls: [{ name: 'run_tests', arguments: {} }] },
    // Markdown, streamed in pieces: the view shows it rendered.
    {
      content:
        `**add** is fixed; I left \`mul\` as it was, as you asked.\n\n- calc.py: \`add\` returns \`a + b\`\n\n` +
        '```python\ndef add(a, b):\n    return a + b\n```',
    },
    // The follow-up's request must hold the first turn: the task and the answer.
    { requires: [CHAT_TASK, 'is fixed; I left', CHAT_REASON], content: SECOND_ANSWER },
    // The prompt command picked from the `/` menu reaches the model expanded.
    { requires: [EXPANDED_COMMAND], content: COMMAND_ANSWER },
    // Two hunks in one proposal: the card decides each.
    {
      requires: [HUNKS_TASK],
      content: 'Scaling both.',
      tool_calls: [{ name: 'write_file', arguments: { path: 'notes.py', content: NOTES_PROPOSED, _reasoningForCall: 'scale the two notes' } }],
    },
    { content: 'Kept what you accepted.' },
  ];
}

/** The chat view's page: the webview's inner frame. */
function chatFrame(page) {
  return page.frameLocator('iframe.webview.ready').first().frameLocator('iframe#active-frame');
}

async function openChat(page) {
  await runCommand(page, 'Toolgate: Open Chat');
  const frame = chatFrame(page);
  await frame.locator('#input').waitFor({ state: 'visible', timeout: 60_000 });
  return frame;
}

async function viewText(frame) {
  return (await frame.locator('#log').innerText()).replace(/\u00a0/g, ' ');
}

/** Run the chat scenario; throws with what went wrong. */
export async function chatScenario({ page, model, calcPath, testsPath, expected, shot, log, apiKey }) {
  let frame = await openChat(page);
  await waitUntil('the chat view to say the server is ready', async () =>
    /Ready/.test(await frame.locator('#status').innerText()),
  { timeout: 90_000 });
  log('the chat view is open and the server ready');

  // 1. Type the task; Enter sends.
  await frame.locator('#input').click();
  await frame.locator('#input').fill(CHAT_TASK);
  await frame.locator('#input').press('Enter');
  await waitUntil('the message in the conversation', async () => (await viewText(frame)).includes(CHAT_TASK));

  // 2. The first proposal's card: file, +/- summary, the reason, Open Diff / Accept / Reject….
  const pendingCard = frame.locator('.card.proposal', { has: frame.locator('button[data-action="accept"]') }).first();
  await pendingCard.waitFor({ state: 'visible', timeout: 60_000 });
  const cardText = await pendingCard.innerText();
  for (const part of ['calc.py', '+1', '−1', 'add subtracts', 'Open Diff', 'Accept', 'Reject…']) {
    if (!cardText.includes(part)) {
      throw new Error(`the proposal card lacks "${part}": ${cardText}`);
    }
  }
  await page.waitForTimeout(300);
  await shot('chat-card.png');
  await pendingCard.locator('button[data-action="accept"]').click();
  await waitUntil('the first card to say accepted', async () =>
    (await frame.locator('.card.proposal').first().innerText()).includes('accepted'),
  );
  log('accepted the first proposal from its card');

  // 3. The second proposal: Reject… asks for a reason.
  await waitUntil('the second proposal card', async () => (await frame.locator('.card.proposal').count()) >= 2, { timeout: 60_000 });
  const second = frame.locator('.card.proposal').nth(1);
  await second.locator('button[data-action="reject"]').waitFor({ state: 'visible', timeout: 30_000 });
  await second.locator('button[data-action="reject"]').click();
  await answerInputBox(page, CHAT_REASON, 'Reject');
  await waitUntil('the second card to say rejected with the reason', async () => {
    const text = await second.innerText();
    return text.includes('rejected') && text.includes(CHAT_REASON);
  });
  log('rejected the second proposal with a reason from its card');

  // 4. The streamed answer, drawn as markdown; the run's status goes back to ready.
  await frame.locator('.entry.assistant strong', { hasText: 'add' }).waitFor({ timeout: 60_000 });
  await waitUntil('the answer to arrive in full', async () => (await viewText(frame)).includes('returns a + b'), { timeout: 30_000 });
  await waitUntil('the run to finish', async () => /Ready/.test(await frame.locator('#status').innerText()), { timeout: 60_000 });
  await page.waitForTimeout(300);
  await shot('chat-turn1.png');
  log('the streamed answer is in the view');
  // The turn's header names the rules file its system prompt carried.
  const firstHeader = await frame.locator('.entry.user .who').first().innerText();
  if (!/rules:.*AGENTS\.md/.test(firstHeader)) {
    throw new Error(`the first turn's header does not name AGENTS.md: ${firstHeader}`);
  }

  // The run's own test run: its card has the counts and a link to Problems.
  const testsCard = frame.locator('.tests-card').first();
  await waitUntil('the run_tests card with its summary', async () => /1 passed, 1 failed/.test(await testsCard.innerText()));
  // Each call is a row that opens on its arguments, its result and how long it took.
  const readRow = frame.locator('details.tool.row.read').first();
  await readRow.locator('summary').click();
  await waitUntil('the read_file row to show its arguments and result', async () => {
    const text = await readRow.innerText();
    return /arguments/i.test(text) && /"path": "calc\.py"/.test(text) && /def add/.test(text) && /Took \d/.test(text);
  });
  // The answer's code block, highlighted, with its Copy button.
  const code = frame.locator('.entry.assistant .code-block').first();
  if ((await code.locator('.hljs-keyword').count()) === 0 || (await code.locator('button[data-action="copyCode"]').count()) !== 1) {
    throw new Error(`the answer's code block is not highlighted with a Copy button: ${await code.innerHTML()}`);
  }
  // Copy puts the code itself on the clipboard, through the editor.
  await page.evaluate(() => navigator.clipboard.writeText('before the copy'));
  await code.locator('button[data-action="copyCode"]').click();
  await waitUntil('the code block on the clipboard', async () =>
    (await page.evaluate(() => navigator.clipboard.readText())).trimEnd() === 'def add(a, b):\n    return a + b',
  );
  // The whole view speaks in words: no run or call id in the text a person reads.
  if (/\b[rwu]-[0-9a-f]{6,}/.test(await viewText(frame))) {
    throw new Error(`the chat view shows an id: ${await viewText(frame)}`);
  }
  await testsCard.scrollIntoViewIfNeeded();
  await page.waitForTimeout(300);
  await shot('chat-tests.png');
  log('the finished run: its calls as rows, its tests, its answer\'s code highlighted');
  await testsCard.locator('button[data-action="showProblems"]').click();
  const problems = page.locator('.markers-panel');
  await waitUntil('the run\'s failure in Problems', async () => /assert 5 == 6/.test(await problems.innerText()), { timeout: 30_000 });

  // 5. The order of a person who runs the tests after a finished run: Run Tests must put its
  // own failures in Problems. The test is changed first, so its new message tells this run's
  // diagnostics from the ones the agent's run left.
  fs.writeFileSync(testsPath, fs.readFileSync(testsPath, 'utf8').replace('mul(2, 3) == 6', 'mul(2, 4) == 8'));
  await runCommand(page, 'Toolgate: Run Tests');
  await page
    .locator('.notifications-toasts', { hasText: 'Toolgate tests:' })
    .waitFor({ state: 'visible', timeout: 120_000 });
  await runCommand(page, 'View: Focus Problems');
  await waitUntil('the new failure of test_mul in Problems after Run Tests', async () => /assert 6 == 8/.test(await problems.innerText()), {
    timeout: 60_000,
  });
  await page.waitForTimeout(300);
  await shot('problems-after-run.png');
  const onDisk = fs.readFileSync(calcPath, 'utf8');
  if (onDisk !== expected) {
    throw new Error(`calc.py on disk is not the accepted text after Run Tests:\n${onDisk}`);
  }
  log('Run Tests after the finished run put test_mul in Problems');

  // 6. A follow-up that depends on the first turn.
  frame = await openChat(page);
  await frame.locator('#input').fill(FOLLOW_UP);
  await frame.locator('#input').press('Enter');
  await waitUntil('the follow-up answer', async () => (await viewText(frame)).includes('mul is next'), { timeout: 90_000 });
  if (model.missing.length) {
    throw new Error(`the follow-up's request lacked the first turn: ${JSON.stringify(model.missing)}`);
  }
  const followUp = JSON.stringify(model.requests.at(-1).body.messages);
  if (!followUp.includes(CHAT_TASK)) {
    throw new Error('the follow-up request does not hold the first task');
  }
  await waitUntil('the second run to finish', async () => /Ready/.test(await frame.locator('#status').innerText()), { timeout: 60_000 });
  const title = await frame.locator('#session option:checked').innerText();
  log(`the follow-up saw the first turn; session "${title}"`);
  await shot('chat-follow-up.png');

  // 6b. The `/` menu: the view's own commands and the project's prompt file, with its
  // description, argument hint and file; arrows move, Escape closes, typing filters, Enter picks.
  const input = frame.locator('#input');
  const menu = frame.locator('#slash-menu');
  const selected = () => menu.locator('.slash-item.selected').innerText();
  await input.click();
  await input.pressSequentially('/');
  await menu.waitFor({ state: 'visible', timeout: 10_000 });
  await waitUntil('the prompt file in the / menu', async () => (await menu.innerText()).includes('/fix-issue'), { timeout: 30_000 });
  const menuText = await menu.innerText();
  for (const part of ['/new', '/undo', '/tests', '/review', '/commands', '/fix-issue', 'NUMBER', "Fix a numbered issue the project's way", '.claude/commands/fix-issue.md']) {
    if (!menuText.includes(part)) {
      throw new Error(`the / menu lacks "${part}": ${menuText}`);
    }
  }
  await page.waitForTimeout(300);
  await shot('chat-slash-menu.png');
  await input.press('ArrowDown');
  if (!(await selected()).startsWith('/undo')) {
    throw new Error(`ArrowDown did not move to /undo: ${await selected()}`);
  }
  await input.press('ArrowUp');
  if (!(await selected()).startsWith('/new')) {
    throw new Error(`ArrowUp did not move back to /new: ${await selected()}`);
  }
  await input.press('Escape');
  await menu.waitFor({ state: 'hidden', timeout: 5_000 });
  await input.pressSequentially('fix');
  await menu.waitFor({ state: 'visible', timeout: 5_000 });
  if (!(await selected()).startsWith('/fix-issue')) {
    throw new Error(`typing "fix" did not select /fix-issue: ${await selected()}`);
  }
  await input.press('Enter');
  await menu.waitFor({ state: 'hidden', timeout: 5_000 });
  if ((await input.inputValue()) !== '/fix-issue ') {
    throw new Error(`picking /fix-issue put "${await input.inputValue()}" in the input`);
  }
  await input.pressSequentially('42');
  await input.press('Enter');
  await waitUntil('the prompt command\'s answer', async () => (await viewText(frame)).includes(COMMAND_ANSWER), { timeout: 90_000 });
  if (model.missing.length) {
    throw new Error(`the prompt command's request lacked its expanded prompt: ${JSON.stringify(model.missing)}`);
  }
  const commandTurn = frame.locator('.entry.user', { hasText: '/fix-issue 42' });
  await waitUntil('the command\'s turn to name AGENTS.md', async () => /rules:.*AGENTS\.md/.test(await commandTurn.locator('.who').innerText()));
  await waitUntil('the command\'s run to finish', async () => /Ready/.test(await frame.locator('#status').innerText()), { timeout: 60_000 });
  log('the / menu offered /fix-issue; picked and sent, the model read its expanded prompt');

  // 6c. The Customization panel: what was found and where it came from.
  await frame.locator('#toggle-customization').click();
  const panel = frame.locator('#customization');
  await panel.waitFor({ state: 'visible', timeout: 10_000 });
  await waitUntil('the customization list', async () => {
    const text = await panel.innerText();
    return text.includes('AGENTS.md') && text.includes('/fix-issue') && text.includes('.claude/commands/fix-issue.md');
  }, { timeout: 30_000 });
  const panelText = await panel.innerText();
  for (const part of ['Rules', 'Skills', 'Commands', 'Hooks', 'MCP servers', 'always']) {
    if (!panelText.includes(part)) {
      throw new Error(`the Customization panel lacks "${part}": ${panelText}`);
    }
  }
  await page.waitForTimeout(300);
  await shot('chat-customization.png');
  await frame.locator('#toggle-customization').click();
  await panel.waitFor({ state: 'hidden', timeout: 10_000 });
  log('the Customization panel listed AGENTS.md and the prompt file');

  // 6d. A proposal of two hunks: the card shows both, and each is decided on its own (the diff
  // editor's own Accept Hunk / Reject Hunk); the file keeps the accepted one only.
  const notesPath = path.join(path.dirname(calcPath), 'notes.py');
  await frame.locator('#input').fill(HUNKS_TASK);
  await frame.locator('#input').press('Enter');
  const hunksCard = frame.locator('.card.proposal', { hasText: 'notes.py' }).first();
  await waitUntil('the two-hunk card with a button per hunk', async () =>
    (await hunksCard.locator('.hunk').count()) === 2 && (await hunksCard.locator('button[data-action="acceptHunk"]').count()) === 2,
  { timeout: 60_000 });
  const hunkText = await hunksCard.innerText();
  if (!/NOTE_2 = 200/.test(hunkText) || !/NOTE_19 = 1900/.test(hunkText)) {
    throw new Error(`the card does not show the change itself: ${hunkText}`);
  }
  await hunksCard.locator('button[data-action="acceptHunk"][data-hunk="0"]').click();
  await waitUntil('the first hunk to say accepted', async () =>
    /accepted/.test(await hunksCard.locator('.hunk').first().innerText()) &&
    (await hunksCard.locator('button[data-action="acceptHunk"]').count()) === 1,
  );
  await page.waitForTimeout(300);
  await shot('chat-hunks.png');
  await hunksCard.locator('button[data-action="rejectHunk"][data-hunk="1"]').click();
  await waitUntil('the card to say partly accepted', async () => /partly accepted/.test(await hunksCard.innerText()), { timeout: 30_000 });
  await waitUntil('notes.py with the accepted hunk only', () => {
    const text = fs.readFileSync(notesPath, 'utf8');
    return text.includes('NOTE_2 = 200') && text.includes('NOTE_19 = 19\n');
  }, { timeout: 30_000 });
  await waitUntil('the two-hunk run to finish', async () => /Ready/.test(await frame.locator('#status').innerText()), { timeout: 60_000 });
  log('a two-hunk proposal was decided hunk by hunk on its card');

  // 7. Reload the window: the session comes back, with both turns.
  await page.reload();
  await page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
  frame = await openChat(page);
  await waitUntil('the session after the reload', async () => {
    const text = await viewText(frame);
    return text.includes(CHAT_TASK) && text.includes(FIRST_ANSWER.slice(0, 12)) && text.includes('mul is next');
  }, { timeout: 90_000 });
  const options = await frame.locator('#session option').allInnerTexts();
  if (!options.some((option) => option.includes(title.replace(/ \(\d+ turns?\)$/, '')))) {
    throw new Error(`the session picker lacks the session "${title}": ${options.join(' | ')}`);
  }
  const everything = await frame.locator('body').innerText();
  if (everything.includes(apiKey)) {
    throw new Error('the chat view shows the API key');
  }
  await page.waitForTimeout(300);
  await shot('chat-reloaded.png');
  log('after the reload the view shows the session again');
}

/** A plan with a gap: nothing provides docs.render. */
const PARTIAL_PLAN = {
  goal: 'Publish calc.py as HTML',
  steps: [
    { step_id: 'read', capability: 'fs.read', inputs: { path: 'calc.py' } },
    {
      step_id: 'render',
      capability: 'docs.render',
      inputs: { markdown: '${steps.read.output.content}' },
      capability_contract: { required_outputs: ['html'] },
    },
  ],
};
/** A plan every step of which a built-in tool covers. */
const READY_PLAN = {
  goal: 'Look at add',
  steps: [
    { step_id: 'read', capability: 'fs.read', inputs: { path: 'calc.py' } },
    { step_id: 'find', capability: 'code.search', inputs: { pattern: 'def add' } },
  ],
};

/** The model's turns for the after-run order: one write_file (accepted), a plain answer, two plans. */
export function afterRunScript({ accepted }) {
  return [
    {
      content: '`add` subtracts; I will fix it.',
      tool_calls: [{ name: 'write_file', arguments: { path: 'calc.py', content: accepted } }],
    },
    // No run_tests in the run: the person runs the tests afterwards.
    { content: 'add is fixed.' },
    { content: JSON.stringify(PARTIAL_PLAN) },
    { content: JSON.stringify(READY_PLAN) },
  ];
}

/**
 * The order a person follows: ask in the chat view → accept the proposal → the run finishes
 * (without running the tests) → the test still fails → Toolgate: Run Tests → the failure is in
 * Problems. Nothing in the workspace changes between the run and Run Tests, so the failure is
 * the one the accepted fix left. Then the run's Undo button puts calc.py back, and the undo's
 * own button (Redo) brings the fix back; then two plans: one with a gap (scaffolded, then
 * dropped), one ready (approved: it runs); then a reload of the window brings the plans and
 * every run's end back, in order, with their undo. Last, `toolgate undo` in a terminal: the
 * chat view on screen draws it without a reload.
 */
export async function afterRunScenario({ page, model, workspace, original, expected, python, shot, log }) {
  const calcPath = `${workspace}/calc.py`;
  const frame = await openChat(page);
  await waitUntil('the chat view to say the server is ready', async () =>
    /Ready/.test(await frame.locator('#status').innerText()),
  { timeout: 90_000 });
  await frame.locator('#input').click();
  await frame.locator('#input').fill(CHAT_TASK);
  await frame.locator('#input').press('Enter');
  const pendingCard = frame.locator('.card.proposal', { has: frame.locator('button[data-action="accept"]') }).first();
  await pendingCard.waitFor({ state: 'visible', timeout: 60_000 });
  await pendingCard.locator('button[data-action="accept"]').click();
  await waitUntil('the card to say accepted', async () =>
    (await frame.locator('.card.proposal').first().innerText()).includes('accepted'),
  );
  await waitUntil('the answer', async () => (await viewText(frame)).includes('add is fixed.'), { timeout: 60_000 });
  await waitUntil('the run to finish', async () => /Ready/.test(await frame.locator('#status').innerText()), { timeout: 60_000 });
  log('the run finished after the accepted proposal');

  // 1. Toolgate: Run Tests, twice: each run's failure is in Problems (the second publishes
  // the same diagnostics again, which must not empty the panel).
  const problems = page.locator('.markers-panel');
  for (const round of [1, 2]) {
    await runCommand(page, 'Toolgate: Run Tests');
    const toast = page.locator('.notifications-toasts .notification-toast', { hasText: 'Toolgate tests:' }).first();
    await toast.waitFor({ state: 'visible', timeout: 120_000 });
    const said = (await toast.innerText()).replace(/\s+/g, ' ');
    log(`Run Tests (${round}) said: ${said.slice(0, 300)}`);
    if (!said.includes('1 failed') || said.includes('Problems shows no failure')) {
      throw new Error(`Run Tests (${round}) did not put its failure in Problems: ${said}`);
    }
    // The toast's own button: Problems must open, not close when it is already open.
    await toast.locator('.monaco-button', { hasText: 'Show Problems' }).click();
    await waitUntil(`the failure of test_mul in Problems after Run Tests (${round})`, async () =>
      (await problems.isVisible()) && /assert 5 == 6/.test(await problems.innerText()),
    { timeout: 60_000 });
  }
  await page.waitForTimeout(300);
  await shot('problems-after-run.png');
  const onDisk = fs.readFileSync(calcPath, 'utf8');
  if (onDisk !== expected) {
    throw new Error(`calc.py on disk is not the accepted text after Run Tests:\n${onDisk}`);
  }
  log('Run Tests after the finished run put test_mul in Problems');

  // 2. The run's Undo button: it says what it puts back, asks, and calc.py is as before the run.
  const runEnd = frame.locator('.run-end', { has: frame.locator('button[data-action="undoRun"]') }).first();
  await runEnd.waitFor({ state: 'visible', timeout: 30_000 });
  const runEndText = await runEnd.innerText();
  if (!runEndText.includes('calc.py')) {
    throw new Error(`the end of the run does not name the file it changed: ${runEndText}`);
  }
  await runEnd.locator('button[data-action="undoRun"]').click();
  const ask = page.locator('.notifications-toasts .notification-toast', { hasText: 'It will restore calc.py' }).first();
  await ask.waitFor({ state: 'visible', timeout: 30_000 });
  await ask.locator('.monaco-button', { hasText: /^Undo$/ }).click();
  await waitUntil('calc.py back on disk as before the run', () => fs.readFileSync(calcPath, 'utf8') === original, { timeout: 30_000 });
  await waitUntil('the end of the run to say undone', async () => /undone/.test(await frame.locator('.run-end').first().innerText()));
  await page.waitForTimeout(300);
  await shot('chat-undone.png');
  log('the Undo button put calc.py back');

  // 2b. The undo ends with a line of its own, whose button undoes the undo: the run's
  // changes come back on disk.
  const undoEnd = frame.locator('.run-end', { has: frame.locator('button[data-action="undoRun"]', { hasText: 'Redo (undo the undo)' }) }).first();
  await undoEnd.waitFor({ state: 'visible', timeout: 30_000 });
  const undoRunId = await undoEnd.getAttribute('data-run');
  // Named in words; the ids stay in the tooltip.
  if (!undoRunId?.startsWith('u-') || !/Undid the run at \d\d:\d\d/.test(await undoEnd.innerText()) ||
      !/of run r-/.test(await undoEnd.getAttribute('title'))) {
    throw new Error(`the undo's own line is not as expected (${undoRunId}): ${await undoEnd.innerText()}`);
  }
  await undoEnd.locator('button[data-action="undoRun"]').click();
  // The question names the undo by its time, never by its id.
  const askRedo = page.locator('.notifications-toasts .notification-toast', { hasText: /undo the undo at \d\d:\d\d\? It will restore calc\.py/ }).first();
  await askRedo.waitFor({ state: 'visible', timeout: 30_000 });
  await askRedo.locator('.monaco-button', { hasText: /^Undo$/ }).click();
  await waitUntil('calc.py back on disk as the run left it', () => fs.readFileSync(calcPath, 'utf8') === expected, { timeout: 30_000 });
  await waitUntil('the undo\'s line to say undone and the run to offer its undo again', async () =>
    /undone/.test(await frame.locator(`.run-end[data-run="${undoRunId}"]`).innerText()) &&
    (await frame.locator('.run-end').first().locator('button[data-action="undoRun"]', { hasText: 'Undo this run' }).count()) === 1,
  );
  const redoEnd = frame.locator('.run-end', { has: frame.locator('button[data-action="undoRun"]', { hasText: 'Redo (undo the undo)' }) });
  await waitUntil('the redo\'s own line with its own button', async () => (await redoEnd.count()) === 1);
  const redoRunId = await redoEnd.first().getAttribute('data-run');
  await page.waitForTimeout(300);
  await shot('chat-redone.png');
  log(`the undo's own button (${undoRunId}) brought the run's change back as ${redoRunId}`);

  // 3. A plan with a gap: its steps with capability and tool, the gap marked, flagged partial,
  // no Approve; "Scaffold missing tool" writes the tool; Drop runs nothing.
  const served = model.served();
  await frame.locator('#input').fill(PARTIAL_PLAN.goal);
  await frame.locator('#plan').click();
  const partial = frame.locator('.card.plan', { hasText: PARTIAL_PLAN.goal }).first();
  await partial.waitFor({ state: 'visible', timeout: 60_000 });
  const partialText = await partial.innerText();
  for (const part of ['partial', 'fs.read', 'read_file', 'docs.render', 'gap: no tool', 'Scaffold missing tool docs_render', 'Drop']) {
    if (!partialText.includes(part)) {
      throw new Error(`the plan card lacks "${part}": ${partialText}`);
    }
  }
  if (await partial.locator('button[data-action="approvePlan"]').count()) {
    throw new Error('a partial plan offers Approve');
  }
  await page.waitForTimeout(300);
  await shot('chat-plan-partial.png');
  await partial.locator('button[data-action="scaffold"]').click();
  const manifest = `${workspace}/tools/docs_render/tool.yaml`;
  await waitUntil('the scaffolded tool on disk', () => fs.existsSync(manifest), { timeout: 30_000 });
  await waitUntil('the card to say the gap is scaffolded', async () => /scaffolded in tools\/docs_render/.test(await partial.innerText()));
  await partial.locator('button[data-action="dropPlan"]').click();
  await waitUntil('the card to say dropped', async () => /dropped/.test(await partial.innerText()));
  if ((await partial.locator('button').count()) !== 0) {
    throw new Error(`a dropped plan still has buttons: ${await partial.innerText()}`);
  }
  log('the partial plan showed its gap; the missing tool was scaffolded; the plan was dropped');

  // 4. A ready plan: Approve runs it through the gate, and the run ends in the view.
  await frame.locator('#input').fill(READY_PLAN.goal);
  await frame.locator('#plan').click();
  const ready = frame.locator('.card.plan', { hasText: READY_PLAN.goal }).first();
  await ready.waitFor({ state: 'visible', timeout: 60_000 });
  if (!/ready/.test(await ready.innerText()) || !/search_code/.test(await ready.innerText())) {
    throw new Error(`the ready plan card is not as expected: ${await ready.innerText()}`);
  }
  if (model.served() !== served + 2) {
    throw new Error(`the model was asked ${model.served() - served} times for two plans: the dropped plan ran?`);
  }
  await ready.locator('button[data-action="approvePlan"]').click();
  // A short workflow can end before the card is looked at: "Running…" or already "Ran —";
  // the run's id is in the line's tooltip only.
  const planLine = ready.locator('.reason');
  await waitUntil('the approved plan to run', async () => /^(Running…|Ran — )/.test(await planLine.innerText().catch(() => '')), { timeout: 30_000 });
  const planRun = (await planLine.getAttribute('title')).match(/^run (w-[\w-]+)$/)[1];
  await waitUntil('the plan\'s run to end', async () =>
    /Run completed/.test(await frame.locator(`.run-end[data-run="${planRun}"]`).innerText().catch(() => '')),
  { timeout: 60_000 });
  await waitUntil('the plan card to say how its run ended', async () =>
    (await ready.innerText()).includes('Ran — completed'));
  await page.waitForTimeout(300);
  await shot('chat-plan-approved.png');
  log(`the ready plan was approved and ran as ${planRun}`);

  // 5. Reload the window: the plan cards (with what became of them) and every run's end come
  // back in order, each with its undo as the disk has it now.
  const runId = await frame.locator('.run-end').first().getAttribute('data-run');
  await page.reload();
  await page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
  const again = await openChat(page);
  await waitUntil('the plans and runs after the reload', async () =>
    (await again.locator('.card.plan').count()) === 2 && (await again.locator('.run-end').count()) === 4,
  { timeout: 90_000 });
  const ends = await again.locator('.run-end').evaluateAll((nodes) => nodes.map((n) => n.getAttribute('data-run')));
  if (JSON.stringify(ends) !== JSON.stringify([runId, undoRunId, redoRunId, planRun])) {
    throw new Error(`the run ends after the reload are not in order: ${ends.join(', ')}`);
  }
  const endText = async (id, view = again) => view.locator(`.run-end[data-run="${id}"]`).innerText();
  const undoButton = (id) => again.locator(`.run-end[data-run="${id}"] button[data-action="undoRun"]`);
  if (!/calc\.py/.test(await endText(runId)) || !/Undo this run/.test(await undoButton(runId).innerText())) {
    throw new Error(`the run's end after the reload: ${await endText(runId)}`);
  }
  if (!/undone/.test(await endText(undoRunId)) || (await undoButton(undoRunId).count()) !== 0) {
    throw new Error(`the undo's end after the reload: ${await endText(undoRunId)}`);
  }
  if (!/Redo \(undo the undo\)/.test(await undoButton(redoRunId).innerText())) {
    throw new Error(`the redo's end after the reload: ${await endText(redoRunId)}`);
  }
  if (!/Run completed/.test(await endText(planRun)) || (await undoButton(planRun).count()) !== 0) {
    throw new Error(`the plan run's end after the reload: ${await endText(planRun)}`);
  }
  const partialAgain = await again.locator('.card.plan', { hasText: PARTIAL_PLAN.goal }).innerText();
  for (const part of ['partial', 'dropped', 'scaffolded in tools/docs_render']) {
    if (!partialAgain.includes(part)) {
      throw new Error(`the partial plan after the reload lacks "${part}": ${partialAgain}`);
    }
  }
  const readyAgain = await again.locator('.card.plan', { hasText: READY_PLAN.goal }).innerText();
  if (!readyAgain.includes('approved') || !readyAgain.includes('Ran — completed')) {
    throw new Error(`the ready plan after the reload: ${readyAgain}`);
  }
  if ((await again.locator('.card.plan button').count()) !== 0) {
    throw new Error('a decided plan offers buttons again after the reload');
  }
  await page.waitForTimeout(300);
  await shot('chat-plans-reloaded.png');
  log('after the reload the plans and the run ends are back, in order, with their undo');

  // 6. Toolgate: Undo Last Run from the palette undoes the latest run that changed files (the
  // redo): the chat shows it at once, as its button would, and the same after a reload.
  await runCommand(page, 'Toolgate: Undo Last Run');
  // After the reload this window never saw the redo start: it is "an earlier run".
  const askPalette = page.locator('.notifications-toasts .notification-toast', { hasText: /undo (an earlier run|the undo at \d\d:\d\d)\? It will restore calc\.py/ }).first();
  await askPalette.waitFor({ state: 'visible', timeout: 30_000 });
  await askPalette.locator('.monaco-button', { hasText: /^Undo$/ }).click();
  await waitUntil('calc.py back on disk as before the run', () => fs.readFileSync(calcPath, 'utf8') === original, { timeout: 30_000 });
  const paletteEnd = again.locator(`.run-end[title$="of run ${redoRunId}"]`);
  await waitUntil('the palette\'s undo in the chat without a reload', async () =>
    (await paletteEnd.count()) === 1 &&
    /Redo \(undo the undo\)/.test(await paletteEnd.innerText()) &&
    /undone/.test(await endText(redoRunId)) && (await undoButton(redoRunId).count()) === 0 &&
    // the undo the redo undid is in effect again, so the first run is undone again
    /undone/.test(await endText(runId)) && (await undoButton(runId).count()) === 0 &&
    (await undoButton(undoRunId).count()) === 1,
  { timeout: 30_000 });
  const paletteRunId = await paletteEnd.getAttribute('data-run');
  const liveEnds = await again.locator('.run-end').evaluateAll((nodes) => nodes.map((n) => n.innerText.replace(/\s+/g, ' ')));
  await page.waitForTimeout(300);
  await shot('chat-palette-undo.png');
  await page.reload();
  await page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
  const third = await openChat(page);
  await waitUntil('the run ends after the second reload', async () => (await third.locator('.run-end').count()) === 5, { timeout: 90_000 });
  const endsAgain = await third.locator('.run-end').evaluateAll((nodes) => nodes.map((n) => n.getAttribute('data-run')));
  if (JSON.stringify(endsAgain) !== JSON.stringify([runId, undoRunId, redoRunId, planRun, paletteRunId])) {
    throw new Error(`the run ends after the second reload are not in order: ${endsAgain.join(', ')}`);
  }
  const reloadedEnds = await third.locator('.run-end').evaluateAll((nodes) => nodes.map((n) => n.innerText.replace(/\s+/g, ' ')));
  // Lines and buttons as they were live (the notes under them differ: live ones say what was
  // put back, reloaded ones which undo undid the run).
  const gist = (text) => text.replace(/(Undone at|Undone again|Undone by|Its changes were brought back).*$/, '').trim();
  if (JSON.stringify(liveEnds.map(gist)) !== JSON.stringify(reloadedEnds.map(gist))) {
    throw new Error(`the run ends live and after the reload differ:\n${liveEnds.join('\n')}\n---\n${reloadedEnds.join('\n')}`);
  }
  log(`Undo Last Run from the palette showed ${paletteRunId} at once, as after a reload`);

  // 7. `toolgate undo` in a terminal undoes the latest run (the palette's undo, so the fix
  // comes back): the server hears of the session file from the editor's watcher, and the chat
  // view on screen draws the terminal's undo without a reload.
  const said = execFileSync(python, ['-m', 'toolgate', 'undo', '--workspace', workspace], { encoding: 'utf8', timeout: 60_000 });
  log(`toolgate undo in a terminal said: ${said.trim().split('\n')[0]}`);
  if (fs.readFileSync(calcPath, 'utf8') !== expected) {
    throw new Error('toolgate undo in a terminal did not bring the fix back');
  }
  const terminalEnd = third.locator(`.run-end[title$="of run ${paletteRunId}"]`);
  await waitUntil('the terminal\'s undo in the chat without a reload', async () =>
    (await terminalEnd.count()) === 1 && /undone/.test(await endText(paletteRunId, third)),
  { timeout: 30_000 });
  await shot('chat-terminal-undo.png');
  log('the chat view drew the undo made in a terminal without a reload');
}
