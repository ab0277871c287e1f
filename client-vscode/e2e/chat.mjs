// The chat view, end to end: type a task, see the streamed answer, accept one proposal from its
// card and reject another with a reason; then the order of a person who runs the tests after a
// finished run (Toolgate: Run Tests → the failure in Problems); a follow-up that depends on the
// first turn (the scripted model checks that turn is in its messages); reload the window and
// find the session again.
import fs from 'node:fs';
import { answerInputBox, runCommand, waitUntil } from './codeserver.mjs';

export const CHAT_TASK = 'Make the tests in test_calc.py pass';
export const CHAT_REASON = 'Keep mul as it is for now';
const FOLLOW_UP = 'Good. What is left to do after the first turn?';
const FIRST_ANSWER = 'add is fixed; I left mul as it was, as you asked.';
const SECOND_ANSWER = 'Following up on the first turn: mul is next.';

/** The model's turns: two write_file calls (accepted, rejected), an answer, the follow-up's answer. */
export function chatScript({ accepted, rejected }) {
  return [
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
    { content: `**add** is fixed; I left \`mul\` as it was, as you asked.\n\n- calc.py: \`add\` returns \`a + b\`` },
    // The follow-up's request must hold the first turn: the task and the answer.
    { requires: [CHAT_TASK, 'is fixed; I left', CHAT_REASON], content: SECOND_ANSWER },
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

  // The run's own test run: its card has the counts and a link to Problems.
  const testsCard = frame.locator('.tests-card').first();
  await waitUntil('the run_tests card with its summary', async () => /1 passed, 1 failed/.test(await testsCard.innerText()));
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
