// Another language server's problems, told to the model: VS Code's own TypeScript features check
// calc.ts beside Toolgate. The file already has one type error; the agent's change adds another.
// The extension reports the file's diagnostics when the change is proposed and after it lands;
// the model's next request must carry only the new ones, in the words
// "new problems after this change: calc.ts:4 ts Cannot find name 'c'.; …" (TypeScript also hints
// that `b` is no longer read), and the change's card in the chat view names them.
import { runCommand, waitUntil } from './codeserver.mjs';

const CALC_TS = `const one: number = 'one';

export function add(a: number, b: number): number {
  return a - b;
}
`;
export const PROBLEMS_FILES = { 'calc.ts': CALC_TS };
export const PROBLEMS_TASK = 'Fix add in calc.ts';
const OLD_PROBLEM = "Type 'string' is not assignable to type 'number'.";
const NEW_PROBLEM = "calc.ts:4 ts Cannot find name 'c'.";
export const PROBLEMS_NOTE = `new problems after this change: ${NEW_PROBLEM}`;

/** The model: one edit that breaks the type check, then an answer that needs the note. */
export function problemsScript() {
  return [
    {
      content: 'I will fix add.',
      tool_calls: [
        {
          name: 'edit_file',
          arguments: { path: 'calc.ts', search: 'a - b', replace: 'a + c', _reasoningForCall: 'add subtracts' },
        },
      ],
    },
    { requires: [PROBLEMS_NOTE], content: 'add now uses c, which TypeScript cannot find.' },
  ];
}

function chatFrame(page) {
  return page.frameLocator('iframe.webview.ready').first().frameLocator('iframe#active-frame');
}

/** Open a file of the workspace with Quick Open. */
async function openFile(page, name) {
  await page.keyboard.press('Escape');
  await page.keyboard.press('Control+P');
  const input = page.locator('.quick-input-widget input.input');
  await input.waitFor({ state: 'visible', timeout: 15_000 });
  await input.fill(name);
  await page.locator('.quick-input-list .monaco-list-row', { hasText: name }).first().waitFor({ timeout: 15_000 });
  await input.press('Enter');
  await page.locator('.tabs-container .tab.active', { hasText: name }).waitFor({ timeout: 15_000 });
}

/** Run the scenario; throws with what went wrong. */
export async function problemsScenario({ page, model, shot, log }) {
  // The file is open, so TypeScript checks it: its own problem is in the Problems panel.
  await openFile(page, 'calc.ts');
  await runCommand(page, 'View: Focus Problems');
  const problems = page.locator('.markers-panel');
  await waitUntil('TypeScript\'s problem in calc.ts', async () => (await problems.innerText()).includes(OLD_PROBLEM), {
    timeout: 120_000,
  });
  log('TypeScript reports the problem calc.ts had before');

  await runCommand(page, 'Toolgate: Open Chat');
  const frame = chatFrame(page);
  await frame.locator('#input').waitFor({ state: 'visible', timeout: 60_000 });
  await waitUntil('the chat view to say the server is ready', async () => /Ready/.test(await frame.locator('#status').innerText()), {
    timeout: 90_000,
  });
  await frame.locator('#input').click();
  await frame.locator('#input').fill(PROBLEMS_TASK);
  await frame.locator('#input').press('Enter');

  const card = frame.locator('.card.proposal').first();
  await card.locator('button[data-action="accept"]').waitFor({ state: 'visible', timeout: 60_000 });
  await card.locator('button[data-action="accept"]').click();
  log('accepted the change from its card');

  // The card names the problem the change caused, and only that one.
  await waitUntil('the card to name the new problem', async () => (await card.innerText()).includes(NEW_PROBLEM), { timeout: 60_000 });
  const cardText = await card.innerText();
  if (!cardText.includes('New problems after this change') || cardText.includes(OLD_PROBLEM)) {
    throw new Error(`the card does not name just the new problem: ${cardText}`);
  }
  await waitUntil('the run to finish', async () => /Ready/.test(await frame.locator('#status').innerText()), { timeout: 60_000 });
  await page.waitForTimeout(300);
  await shot('chat-problems.png');

  // The model's next request carried the new problem, and not the one the file had before.
  if (model.missing.length) {
    throw new Error(`the model's request after the change lacked the note: ${JSON.stringify(model.missing)}`);
  }
  const told = JSON.stringify(model.requests[1]?.body.messages ?? []);
  if (!told.includes(PROBLEMS_NOTE) || told.includes('not assignable')) {
    throw new Error(`the model was not told just the new problem: ${told.slice(-1500)}`);
  }
  log(`the model read: ${PROBLEMS_NOTE}`);
}
