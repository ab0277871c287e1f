// The editor as the agent's eyes, end to end in the chat view: the `@` menu completes a file
// from the workspace, the `@` picker adds @selection, the current file's chip goes along, and
// the model's request holds what they attached; Edit Selection… on the selected lines ends in
// the proposal's diff, accepted; then the chat's Rewind on that turn puts the code back and
// takes the turn out of the conversation, its Take back brings both back, and a rewind of the
// conversation only leaves the turn out of the next request.
import fs from 'node:fs';
import { answerInputBox, runCommand, waitUntil } from './codeserver.mjs';

const ASK = 'What do these tests check?';
const ANSWER = 'They check add and mul; add subtracts.';
const INSTRUCTION = 'Make add add its arguments';
const EDITED_ANSWER = 'add now adds.';
const FOLLOW_UP = 'Where are we now?';
const FOLLOW_UP_ANSWER = 'We are after the first question.';

/** The model's turns; `requires` lists what each request must hold (else the answer says so). */
export function eyesScript() {
  return [
    // The message's `@test_calc.py` (the test file's text) and `@selection` (the selected
    // lines, named by the chip's file and lines) arrive as context blocks before the words.
    {
      requires: ['The person attached this context', 'def test_mul', 'calc.py, lines 1-2', 'return a - b', ASK],
      content: ANSWER,
    },
    // Edit Selection… sends the selected lines with the instruction.
    {
      requires: [INSTRUCTION, 'calc.py, lines 1-2', 'return a - b'],
      content: 'Changing the selected lines.',
      tool_calls: [
        {
          name: 'edit_file',
          arguments: { path: 'calc.py', search: 'return a - b', replace: 'return a + b', _reasoningForCall: 'add subtracted' },
        },
      ],
    },
    { content: EDITED_ANSWER },
    // After the conversation's rewind: the first turn is there, the edit's turn is not (checked
    // from the request below).
    { requires: [ASK, ANSWER, FOLLOW_UP], content: FOLLOW_UP_ANSWER },
  ];
}

function chatFrame(page) {
  return page.frameLocator('iframe.webview.ready').first().frameLocator('iframe#active-frame');
}

async function viewText(frame) {
  return (await frame.locator('#log').innerText()).replace(/\u00a0/g, ' ');
}

/** Open calc.py from Quick Open: its editor gets the focus, with the selection it had. */
async function openCalc(page) {
  await runCommand(page, 'Go to File');
  const input = page.locator('.quick-input-widget input.input');
  await input.waitFor({ state: 'visible', timeout: 15_000 });
  await input.fill('calc.py');
  await page.locator('.quick-input-list .monaco-list-row', { hasText: /^calc\.py/ }).first().waitFor({ timeout: 15_000 });
  await input.press('Enter');
  await page.locator('.tabs-container .tab.active', { hasText: 'calc.py' }).waitFor({ timeout: 15_000 });
  await page.locator('.editor-instance .monaco-editor.focused').first().waitFor({ timeout: 15_000 });
}

/** Select the lines of `add` (1-2) in calc.py's editor. */
async function selectAdd(page) {
  await openCalc(page);
  await page.keyboard.press('Control+Home');
  await page.keyboard.press('Shift+ArrowDown');
  await page.keyboard.press('Shift+ArrowDown');
  await page.locator('.statusbar', { hasText: '(2 lines selected)' }).waitFor({ timeout: 10_000 }).catch(() => undefined);
}

async function saveAll(page) {
  await runCommand(page, 'File: Save All');
  await page.waitForTimeout(500);
}

async function diffSide(page, side) {
  const text = await page.locator(`.monaco-diff-editor .editor.${side} .view-lines`).first().innerText();
  return text.replace(/\u00a0/g, ' ');
}

async function idle(frame, what) {
  await waitUntil(what, async () => /Ready/.test(await frame.locator('#status').innerText()), { timeout: 90_000 });
}

/** Pick `label` in the rewind's quick pick for the turn `turn`. */
async function chooseRewind(page, turn, label) {
  const widget = page.locator('.quick-input-widget', { hasText: `Rewind to before turn ${turn}` });
  await widget.waitFor({ state: 'visible', timeout: 15_000 });
  await widget.locator('.quick-input-list .monaco-list-row', { hasText: label }).first().click();
  await widget.waitFor({ state: 'hidden', timeout: 15_000 });
}

/** Run the scenario; throws with what went wrong. */
export async function eyesScenario({ page, model, workspace, original, shot, log }) {
  const calcPath = `${workspace}/calc.py`;
  const edited = original.replace('return a - b', 'return a + b');

  // 1. calc.py open with `add` selected (lines 1-2): the chat offers it as a chip. (Selected
  // last: the palette's Escape would clear the selection.)
  await runCommand(page, 'Toolgate: Open Chat');
  const frame = chatFrame(page);
  const input = frame.locator('#input');
  await input.waitFor({ state: 'visible', timeout: 60_000 });
  await idle(frame, 'the chat view to say the server is ready');
  await selectAdd(page);
  const chip = frame.locator('#pointing .pointing-chip');
  await waitUntil('the chip of the selected lines', async () => (await chip.innerText()).includes('calc.py:1-2'), { timeout: 30_000 });
  log('the chat offers calc.py:1-2 as a chip');

  // 2. Typing `@test_c` opens the menu on the workspace's file; Enter completes it.
  await input.click();
  await input.pressSequentially(`${ASK} @test_c`);
  const menu = frame.locator('#mention-menu');
  await menu.waitFor({ state: 'visible', timeout: 15_000 });
  await waitUntil('test_calc.py highlighted in the @ menu', async () =>
    (await menu.locator('.mention-item.selected').innerText()).includes('@test_calc.py'),
  { timeout: 15_000 });
  await page.waitForTimeout(300);
  await shot('chat-mention-menu.png');
  await input.press('Enter');
  await waitUntil('the completed mention in the input', async () => (await input.inputValue()) === `${ASK} @test_calc.py `);
  if (!(await menu.isHidden())) {
    throw new Error('the @ menu stayed open after a file was picked');
  }
  // A bare `@` offers the keywords first.
  await input.pressSequentially('@');
  await menu.waitFor({ state: 'visible', timeout: 15_000 });
  await waitUntil('the keywords in the @ menu', async () => {
    const text = await menu.innerText();
    return ['@selection', '@problems', '@diff', '@diff:staged', '@tests', '@calc.py'].every((k) => text.includes(k));
  }, { timeout: 15_000 });
  await input.press('Escape');
  await menu.waitFor({ state: 'hidden', timeout: 5_000 });
  await input.press('Backspace');
  log('the @ menu completed @test_calc.py and offers the keywords');

  // 3. The `@` button opens the editor's picker: @selection from it.
  await frame.locator('#mention-pick').click();
  const picker = page.locator('.quick-input-widget', { hasText: 'Attach context to the message' });
  await picker.waitFor({ state: 'visible', timeout: 15_000 });
  await picker.locator('input.input').fill('@selection');
  await picker.locator('.quick-input-list .monaco-list-row', { hasText: '@selection' }).first().waitFor({ timeout: 15_000 });
  await page.waitForTimeout(300);
  await shot('chat-mention-picker.png');
  await picker.locator('input.input').press('Enter');
  await picker.waitFor({ state: 'hidden', timeout: 15_000 });
  await waitUntil('the picked mention in the input', async () => (await input.inputValue()).trim() === `${ASK} @test_calc.py @selection`, {
    timeout: 15_000,
  });
  log('the @ picker added @selection');

  // 4. Sent: the turn shows what it attached; the model's request holds it.
  await input.press('Enter');
  await waitUntil('the answer', async () => (await viewText(frame)).includes(ANSWER), { timeout: 90_000 });
  await idle(frame, 'the first run to finish');
  const turn = frame.locator('.entry.user').first();
  await waitUntil('the attached context on the turn', async () => {
    const text = await turn.locator('.attached-line').innerText();
    return ['calc.py:1-2', '@test_calc.py', '@selection'].every((part) => text.includes(part));
  }, { timeout: 30_000 });
  if (model.missing.length) {
    throw new Error(`the model's request lacked the attached context: ${JSON.stringify(model.missing)}`);
  }
  await page.waitForTimeout(300);
  await shot('chat-attached.png');
  log('the model received @test_calc.py and @selection; the turn shows them');

  // 5. Edit Selection… (its keybinding) on the same lines: the proposal's diff opens; accepted.
  await selectAdd(page);
  await page.keyboard.press('Control+Alt+I');
  await answerInputBox(page, INSTRUCTION, 'Edit Selection');
  await page.locator('.monaco-diff-editor').first().waitFor({ timeout: 60_000 });
  await waitUntil('the proposed text in the selection edit\'s diff', async () => (await diffSide(page, 'modified')).includes('return a + b'), {
    timeout: 60_000,
  });
  await page.waitForTimeout(500);
  await shot('selection-diff.png');
  const accept = page.locator('.editor-actions [aria-label^="Accept Proposed Edit"]').first();
  await accept.waitFor({ state: 'visible', timeout: 15_000 });
  await accept.click();
  await waitUntil('the edit\'s answer in the chat', async () => (await viewText(frame)).includes(EDITED_ANSWER), { timeout: 90_000 });
  await idle(frame, 'the selection edit to finish');
  await saveAll(page);
  await waitUntil('the accepted edit on disk', () => fs.readFileSync(calcPath, 'utf8') === edited, { timeout: 30_000 });
  log('Edit Selection ended in the diff; accepted');

  // 6. Rewind the edit's turn, code and conversation: calc.py as before, the turn rewound.
  const turns = frame.locator('.entry.user');
  await waitUntil('the edit\'s turn in the chat', async () => (await turns.count()) === 2);
  await runCommand(page, 'Toolgate: Open Chat');
  await turns.nth(1).hover();
  // The turn's Rewind icon shows on hover, as the workbench's own chat shows a request's actions.
  const rewindButton = turns.nth(1).locator('button[data-action="rewind"]');
  await waitUntil('the Rewind icon shown on hover', async () => (await rewindButton.evaluate((b) => b.ownerDocument.defaultView.getComputedStyle(b).opacity)) === '1');
  await shot('chat-rewind-action.png');
  await rewindButton.click();
  await chooseRewind(page, 2, 'Code and conversation');
  await waitUntil('the edit\'s turn shown as rewound', async () => (await frame.locator('.entry.user.rewound').count()) === 1, {
    timeout: 30_000,
  });
  const rewindLine = frame.locator('.rewind-line').last();
  await waitUntil('the rewind\'s line with Take back', async () =>
    (await rewindLine.locator('button[data-action="undoRewind"]').count()) === 1,
  );
  await saveAll(page);
  await waitUntil('calc.py back as before the edit', () => fs.readFileSync(calcPath, 'utf8') === original, { timeout: 30_000 });
  await runCommand(page, 'Toolgate: Open Chat');
  await page.waitForTimeout(300);
  await shot('chat-rewound.png');
  log(`rewound: ${(await rewindLine.innerText()).replace(/\s+/g, ' ')}`);

  // 7. Take back: the change and the turn come back.
  await rewindLine.locator('button[data-action="undoRewind"]').click();
  await waitUntil('the rewind taken back', async () =>
    (await frame.locator('.entry.user.rewound').count()) === 0 && /taken back/.test(await frame.locator('.rewind-line').last().innerText()),
  { timeout: 30_000 });
  await saveAll(page);
  await waitUntil('the edit back on disk', () => fs.readFileSync(calcPath, 'utf8') === edited, { timeout: 30_000 });
  await runCommand(page, 'Toolgate: Open Chat');
  await page.waitForTimeout(300);
  await shot('chat-rewind-taken-back.png');
  log('the rewind was taken back');

  // 8. Rewind the conversation only: the file stays; the next request leaves the turn out.
  await turns.nth(1).hover();
  await turns.nth(1).locator('button[data-action="rewind"]').click();
  await chooseRewind(page, 2, 'Conversation only');
  await waitUntil('the edit\'s turn rewound again', async () => (await frame.locator('.entry.user.rewound').count()) === 1, {
    timeout: 30_000,
  });
  if (fs.readFileSync(calcPath, 'utf8') !== edited) {
    throw new Error('a rewind of the conversation only changed calc.py');
  }
  // The chip removed: the follow-up goes without the file the person looks at.
  const served = model.requests.length;
  await chip.locator('button[data-action="removePointing"]').click();
  await waitUntil('the chip gone', async () => (await chip.count()) === 0, { timeout: 10_000 });
  await input.click();
  await input.fill(FOLLOW_UP);
  await input.press('Enter');
  await waitUntil('the follow-up\'s answer', async () => (await viewText(frame)).includes(FOLLOW_UP_ANSWER), { timeout: 90_000 });
  await idle(frame, 'the follow-up to finish');
  if (model.missing.length) {
    throw new Error(`the follow-up's request lacked the first turn: ${JSON.stringify(model.missing)}`);
  }
  const followUp = JSON.stringify(model.requests[served].body.messages);
  if (followUp.includes(INSTRUCTION) || followUp.includes(EDITED_ANSWER)) {
    throw new Error('the follow-up\'s request still holds the rewound turn');
  }
  if (followUp.includes('the person is looking at')) {
    throw new Error('the follow-up was sent with the file whose chip was removed');
  }
  log('after a rewind of the conversation the model no longer sees the edit\'s turn; the removed chip was not sent');

  // 9. A reload: the session comes back as kept, the first turn with what it attached, the
  // edit's turn rewound, and no Take back on a rewind the conversation went on after.
  await page.reload();
  await page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
  await runCommand(page, 'Toolgate: Open Chat');
  const again = chatFrame(page);
  await waitUntil('the session after the reload', async () => (await viewText(again)).includes(FOLLOW_UP_ANSWER), { timeout: 90_000 });
  const attached = await again.locator('.entry.user').first().locator('.attached-line').innerText();
  if (!attached.includes('@test_calc.py') || !attached.includes('@selection')) {
    throw new Error(`after the reload the first turn does not show what it attached: ${attached}`);
  }
  if ((await again.locator('.entry.user.rewound').count()) !== 1 || (await again.locator('.rewind-line').count()) !== 2) {
    throw new Error('after the reload the rewound turn or the rewinds are not shown');
  }
  // The conversation went on after the second rewind: it is kept, no Take back is offered.
  if ((await again.locator('button[data-action="undoRewind"]').count()) !== 0) {
    throw new Error('a rewind the conversation went on after still offers Take back');
  }
  await page.waitForTimeout(300);
  await shot('chat-eyes-reloaded.png');
  log('after the reload the turn shows what it attached and the rewound turn is marked');
}
