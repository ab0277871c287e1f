// End-to-end test of the extension in a real VS Code (code-server) driven by headless Chromium.
//
//   node e2e/run.mjs --python /path/to/python --vsix dist/toolgate-vscode.vsix --artifacts DIR [--smoke]
//
// Full scenario, against a scripted model server: Ask → the diff opens → Accept → the file on
// disk has the new content; Reject with a reason on a second proposal → the file is unchanged
// and the model reads the reason; run_tests → the failing test is in the Problems panel;
// Review Changes → the comment in Problems, and a slow review cancelled from its notification
// leaves Problems as it was; Ask Agent with Review → the loop's end in a notification.
// --smoke only checks that the workbench lists the extension's commands (no server needed).
// --chat drives the chat view instead (e2e/chat.mjs): a task typed into it, the streamed answer,
// a proposal accepted and one rejected from their cards, a call's row opened, a two-hunk
// proposal decided hunk by hunk on its card, Run Tests after the finished run, a
// follow-up that needs the first turn, and the session found again after a reload.
// --after-run follows a person's order in the chat view: ask, accept, the run ends without
// running the tests, Toolgate: Run Tests (twice) → the failure in Problems; the run's Undo
// button and the undo's own Redo button; a partial plan (gap scaffolded, plan dropped) and a
// ready plan (approved, it runs); a reload that brings the plans and the run ends back.
// --eyes: context the person points at in the chat view (the `@` menu, the `@` picker, the
// current file's chip; the model's request holds what they attached), Edit Selection… ending in
// its diff, and the chat's Rewind on a turn (code and conversation, taken back, conversation
// only) (e2e/eyes.mjs).
// --first-run --base-python PY: a new person's first run (e2e/firstrun.mjs): no Toolgate setting,
// PY (3.10+, without Toolgate) as python3 on PATH; the bundled server installs itself, the
// walkthrough finds the scripted model on a probed port, the sample task's diff is accepted.
// --problems: VS Code's TypeScript features check calc.ts beside Toolgate (e2e/problems.mjs); the
// agent's accepted change adds a type error, the model's next request carries it as a new
// problem, and the change's card in the chat view names it.
// --restricted opens the folder in Restricted Mode: the server refuses run_tests and says why;
// granting trust restarts the server with trusted: true.
// Exits 0 on success, 1 on failure; screenshots and logs go to --artifacts.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import {
  answerInputBox,
  inPalette,
  launchBrowser,
  locateTools,
  openWorkbench,
  runCommand,
  startCodeServer,
  waitUntil,
} from './codeserver.mjs';
import { startScriptedModel } from './scripted-model.mjs';
import { afterRunScenario, afterRunScript, CHAT_FILES, chatScenario, chatScript } from './chat.mjs';
import { eyesScenario, eyesScript } from './eyes.mjs';
import { answerConnectionTest, firstRunScenario, firstRunScript, freeProbedPort } from './firstrun.mjs';
import { PROBLEMS_FILES, problemsScenario, problemsScript } from './problems.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const { values: opts } = parseArgs({
  options: {
    python: { type: 'string', default: 'python3' },
    vsix: { type: 'string', default: path.join(here, '..', 'dist', 'toolgate-vscode.vsix') },
    artifacts: { type: 'string', default: path.join(here, '..', '..', 'test-artifacts', 'vscode') },
    smoke: { type: 'boolean', default: false },
    restricted: { type: 'boolean', default: false },
    chat: { type: 'boolean', default: false },
    'after-run': { type: 'boolean', default: false },
    eyes: { type: 'boolean', default: false },
    problems: { type: 'boolean', default: false },
    'first-run': { type: 'boolean', default: false },
    // --first-run: the Python (3.10+, without Toolgate) put on PATH as python3.
    'base-python': { type: 'string' },
    // --first-run: the embedded model an earlier install left (its kept runtime wheel folder and
    // its assembled model file), for the walkthrough's install button (e2e/firstrun.mjs).
    'runtime-wheels': { type: 'string' },
    'model-file': { type: 'string' },
    keep: { type: 'boolean', default: false },
  },
});

const API_KEY = 'sk-e2e-0123456789-never-shown';
const REJECT_REASON = 'Multiplication is a * b, not a power';

const ORIGINAL_CALC = `def add(a, b):
    return a - b


def mul(a, b):
    return a + b
`;
const ACCEPTED_CALC = `def add(a, b):
    return a + b


def mul(a, b):
    return a + b
`;
const REJECTED_CALC = `def add(a, b):
    return a + b


def mul(a, b):
    return a ** b
`;
const TESTS = `from calc import add, mul


def test_add():
    assert add(2, 3) == 5


def test_mul():
    assert mul(2, 3) == 6
`;

/** In Restricted Mode: the model asks for the tests, then answers. */
const RESTRICTED_SCRIPT = [
  { content: 'Running the tests.', tool_calls: [{ name: 'run_tests', arguments: {} }] },
  { content: 'The tests cannot run in a restricted workspace.' },
];

/** The model's turns: write_file (accepted), write_file (rejected), run_tests, final answer. */
const SCRIPT = [
  {
    content: 'add subtracts; I will fix it.',
    tool_calls: [{ name: 'write_file', arguments: { path: 'calc.py', content: ACCEPTED_CALC } }],
  },
  {
    content: 'Now mul.',
    tool_calls: [{ name: 'write_file', arguments: { path: 'calc.py', content: REJECTED_CALC } }],
  },
  { content: 'Let me run the tests.', tool_calls: [{ name: 'run_tests', arguments: {} }] },
  { content: 'add is fixed; test_mul still fails.' },
];

function log(message) {
  process.stderr.write(`[e2e ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}

function makeWorkspace(root, files = {}) {
  const workspace = path.join(root, 'project');
  fs.mkdirSync(workspace, { recursive: true });
  fs.writeFileSync(path.join(workspace, 'calc.py'), ORIGINAL_CALC);
  fs.writeFileSync(path.join(workspace, 'test_calc.py'), TESTS);
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(workspace, name)), { recursive: true });
    fs.writeFileSync(path.join(workspace, name), text);
  }
  const git = (...args) => execFileSync('git', args, { cwd: workspace, stdio: 'ignore' });
  git('init', '-q');
  git('-c', 'user.name=e2e', '-c', 'user.email=e2e@example.invalid', 'add', '.');
  git('-c', 'user.name=e2e', '-c', 'user.email=e2e@example.invalid', 'commit', '-qm', 'start');
  return workspace;
}

/** The text of the diff's proposed side (the editor renders spaces as no-break spaces). */
async function diffSide(page, side) {
  const text = await page.locator(`.monaco-diff-editor .editor.${side} .view-lines`).first().innerText();
  return text.replace(/\u00a0/g, ' ');
}

function proposedSide(page) {
  return diffSide(page, 'modified');
}

function readText(file) {
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : undefined;
}

async function main() {
  const tools = locateTools();
  fs.mkdirSync(opts.artifacts, { recursive: true });
  if (!fs.existsSync(opts.vsix)) {
    throw new Error(`no .vsix at ${opts.vsix}: run \`npm run package\` first`);
  }
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'toolgate-e2e-'));
  log(`temp folder ${root}`);
  // The chat scenario's workspace carries a rules file and a prompt file, as people keep them.
  const workspace = makeWorkspace(root, opts.chat ? CHAT_FILES : opts.problems ? PROBLEMS_FILES : {});
  const script = opts['first-run']
    ? firstRunScript({ accepted: ACCEPTED_CALC })
    : opts.restricted
    ? RESTRICTED_SCRIPT
    : opts.eyes
    ? eyesScript()
    : opts.problems
    ? problemsScript()
    : opts['after-run']
      ? afterRunScript({ accepted: ACCEPTED_CALC })
      : opts.chat
        ? chatScript({ accepted: ACCEPTED_CALC, rejected: REJECTED_CALC })
        : SCRIPT;
  const firstRun = opts['first-run'];
  // Every scenario answers the extension's connection test (the chat view runs it when it
  // opens) outside its script.
  const model = await startScriptedModel(script, {
    model: 'scripted-model',
    intercept: answerConnectionTest,
    ...(firstRun ? { port: await freeProbedPort() } : {}),
  });
  const toolgateSettings = {
    'toolgate.pythonPath': opts.python,
    'toolgate.baseUrl': model.baseUrl,
    'toolgate.model': 'scripted-model',
    'toolgate.toolCalling.mode': 'native',
    'toolgate.review.openDiff': 'auto',
    // The full protocol trace (initializationOptions with the key among it) goes to the log
    // files, where the test looks for the key and for toolgate.reportDiagnostics.
    'toolgate.trace.server': 'verbose',
  };
  // The workbench's own settings, so that its tips and prompts stay out of the screenshots.
  const workbenchSettings = {
    'workbench.startupEditor': 'none',
    'workbench.tips.enabled': false,
    'workbench.enableExperiments': false,
    'security.workspace.trust.enabled': opts.restricted,
    'security.workspace.trust.startupPrompt': 'never',
    'security.workspace.trust.banner': 'never',
    'telemetry.telemetryLevel': 'off',
    'extensions.autoUpdate': false,
    'extensions.autoCheckUpdates': false,
    'update.mode': 'none',
    'files.autoSave': 'off',
    'chat.disableAIFeatures': true,
    'window.commandCenter': false,
    'workbench.secondarySideBar.defaultVisibility': 'hidden',
  };
  // The first run writes no Toolgate setting: the person has none.
  const settings = firstRun ? workbenchSettings : { ...toolgateSettings, ...workbenchSettings };
  const env = firstRun ? { PATH: pythonOnPath(root, opts['base-python']) } : {};
  let server;
  let browser;
  let failed = false;
  let checkLogs = false;
  try {
    server = await startCodeServer({ tools, root, vsix: opts.vsix, workspace, settings, workspaceTrust: opts.restricted, env });
    log(`code-server at ${server.url}`);
    browser = await launchBrowser(tools, path.join(root, 'chromium'));
    const page = browser.pages()[0] ?? (await browser.newPage());
    await openWorkbench(page, server.url, workspace);
    log('workbench is up');
    const shot = (name) => page.screenshot({ path: path.join(opts.artifacts, name) });
    if (firstRun) {
      await firstRunScenario({
        page, model, server, vsix: opts.vsix, workspace, expected: ACCEPTED_CALC, shot, log, artifacts: opts.artifacts,
        localModel: { wheels: opts['runtime-wheels'], modelFile: opts['model-file'] },
      });
      log('first-run scenario passed');
      return;
    }

    // The extension's commands appear in the palette.
    await runCommand(page, 'Toolgate: Show Transcript');
    log('the palette lists the extension');
    await inPalette(page, 'Toolgate:', 'Toolgate: Ask Agent');
    await shot('palette.png');
    await page.keyboard.press('Escape');
    if (opts.smoke) {
      log('smoke test passed');
      return;
    }
    if (opts.restricted) {
      await restrictedScenario(page, model, server, shot);
      return;
    }

    // Set the API key through SecretStorage.
    await runCommand(page, 'Toolgate: Set API Key');
    await answerInputBox(page, API_KEY, 'API key');

    // Wait for the server: the status bar says idle once the client has started it.
    await waitUntil(
      'the server to start (status bar "Toolgate: idle")',
      async () => (await page.locator('.statusbar').innerText()).includes('Toolgate: idle'),
      { timeout: 60_000 },
    );
    log('server started');

    if (opts.eyes) {
      await eyesScenario({ page, model, workspace, original: ORIGINAL_CALC, shot, log });
      checkLogs = 'secrets';
      log('eyes scenario passed');
      return;
    }
    if (opts.problems) {
      await problemsScenario({ page, model, shot, log });
      checkLogs = 'secrets';
      log('problems scenario passed');
      return;
    }
    if (opts['after-run']) {
      await afterRunScenario({
        page, model, workspace, original: ORIGINAL_CALC, expected: ACCEPTED_CALC, python: opts.python, shot, log,
      });
      checkLogs = 'secrets';
      log('after-run scenario passed');
      return;
    }
    if (opts.chat) {
      await chatScenario({
        page,
        model,
        calcPath: path.join(workspace, 'calc.py'),
        testsPath: path.join(workspace, 'test_calc.py'),
        expected: ACCEPTED_CALC,
        shot,
        log,
        apiKey: API_KEY,
      });
      checkLogs = 'secrets';
      log('chat scenario passed');
      return;
    }

    // 1. Ask → diff opens → Accept → file on disk changes.
    const calcPath = path.join(workspace, 'calc.py');
    await runCommand(page, 'Toolgate: Ask Agent');
    await answerInputBox(page, 'Make the tests in test_calc.py pass', 'Ask Agent');
    const diffTab = page.locator('.tabs-container .tab', { hasText: 'write_file: calc.py' });
    await diffTab.first().waitFor({ timeout: 60_000 });
    await page.locator('.monaco-diff-editor').first().waitFor({ timeout: 30_000 });
    await waitUntil('the proposed text in the diff', async () =>
      (await proposedSide(page)).includes('a + b'),
    );
    await page.waitForTimeout(500);
    await shot('diff.png');
    log('first diff is open');
    const accept = page.locator('.editor-actions [aria-label^="Accept Proposed Edit"]').first();
    await accept.waitFor({ state: 'visible', timeout: 15_000 });
    await accept.click();
    // The edit lands in the editor's buffer through workspace/applyEdit; the buffer goes to
    // disk when the server asks the extension to save it (before it runs tests), checked below.
    await waitUntil('the accepted text in the calc.py buffer', async () => {
      await page.locator('.monaco-diff-editor .editor.original .view-lines').first().waitFor({ timeout: 2000 });
      return (await diffSide(page, 'original')).includes('return a + b') && (await proposedSide(page)).includes('a ** b');
    }, { timeout: 60_000 });
    log(`accepted text is in the buffer (on disk already: ${readText(calcPath) === ACCEPTED_CALC})`);

    // 2. The second proposal: Reject with a reason → file unchanged.
    await waitUntil('the second proposal', () => model.served() >= 2, { timeout: 60_000 });
    await waitUntil('the second diff', async () =>
      (await proposedSide(page)).includes('a ** b'),
    );
    await shot('diff-second.png');
    const reject = page.locator('.editor-actions [aria-label^="Reject Proposed Edit"]').first();
    await reject.waitFor({ state: 'visible', timeout: 15_000 });
    await reject.click();
    await answerInputBox(page, REJECT_REASON, 'Reject write_file');
    log('second proposal rejected');

    // 3. run_tests → the failing test is in the Problems panel.
    await waitUntil('the model to be asked after the tests ran', () => model.served() >= 4, { timeout: 120_000 });
    await runCommand(page, 'View: Focus Problems');
    const problems = page.locator('.markers-panel');
    await waitUntil(
      'test_mul in the Problems panel',
      async () => /test_mul|assert/.test(await problems.innerText()),
      { timeout: 60_000 },
    );
    await page.waitForTimeout(500);
    await shot('problems.png');
    const problemsText = await problems.innerText();
    log(`problems panel: ${problemsText.replace(/\s+/g, ' ').slice(0, 200)}`);

    // 4. The server's quick fix "Ask agent to fix …" from the light bulb starts a new run.
    await problems.locator('.monaco-list-row', { hasText: 'test_mul' }).first().click();
    await page.locator('.tabs-container .tab.active', { hasText: 'test_calc.py' }).waitFor({ timeout: 15_000 });
    const fixes = page.locator('.action-widget', { hasText: 'Ask agent to fix' });
    let attempt = 0;
    await waitUntil('the "Ask agent to fix" quick fix', async () => {
      // The light bulb of the Problems row, else the editor's Quick Fix key.
      if (attempt++ % 2 === 0) {
        await problems.locator('.monaco-list-row', { hasText: 'test_mul' }).first().hover();
        await problems.locator('.codicon-lightbulb, .codicon-lightbulb-autofix').first().click({ timeout: 2000 });
      } else {
        await page.locator('.editor-group-container.active .monaco-editor .view-lines').first().click();
        await page.keyboard.press('Control+.');
      }
      try {
        await fixes.first().waitFor({ state: 'visible', timeout: 3000 });
        return true;
      } catch {
        await page.keyboard.press('Escape');
        return false;
      }
    }, { timeout: 30_000 });
    await shot('quickfix.png');
    await fixes.locator('.monaco-list-row', { hasText: 'Ask agent to fix' }).first().click();
    await waitUntil('the fix run to ask the model', () => model.served() >= 5, { timeout: 60_000 });
    const fixPrompt = JSON.stringify(model.requests[4].body.messages ?? []);
    if (!fixPrompt.includes('test_mul')) {
      throw new Error(`the fix run's prompt does not name the failing test: ${fixPrompt.slice(0, 1000)}`);
    }
    log('the quick fix started a run about test_mul');

    // 5. After that run has finished, Toolgate: Run Tests puts its own failures in Problems.
    // The test changes first, so its new message tells them from what the runs left.
    await waitUntil('the fix run to finish', async () => (await page.locator('.statusbar').innerText()).includes('Toolgate: idle'), {
      timeout: 60_000,
    });
    const testsPath = path.join(workspace, 'test_calc.py');
    fs.writeFileSync(testsPath, fs.readFileSync(testsPath, 'utf8').replace('mul(2, 3) == 6', 'mul(2, 4) == 8'));
    await page.keyboard.press('Escape');
    await runCommand(page, 'Toolgate: Run Tests');
    await page.locator('.notifications-toasts', { hasText: 'Toolgate tests:' }).waitFor({ state: 'visible', timeout: 120_000 });
    await runCommand(page, 'View: Focus Problems');
    await waitUntil('the new failure in Problems after Run Tests', async () => /assert 6 == 8/.test(await problems.innerText()), {
      timeout: 60_000,
    });
    await shot('problems-run-tests.png');
    log('Run Tests after the finished run put its failure in Problems');

    // 6. Review Changes: the model reviews the working tree; its comment is in Problems.
    model.answerNext({
      content: JSON.stringify({
        approved: false,
        comments: [{ path: 'calc.py', line: 5, severity: 'warning', message: 'mul has no test for negative numbers' }],
      }),
    });
    const reviewAsked = model.served();
    await runCommand(page, 'Toolgate: Review Changes');
    await answerInputBox(page, 'Working tree', 'Review Changes');
    await page
      .locator('.notifications-toasts', { hasText: 'Toolgate review of the working tree: not approved: 1 warning' })
      .waitFor({ state: 'visible', timeout: 60_000 });
    const reviewRequest = JSON.stringify(model.requests[reviewAsked]?.body ?? {});
    if (!reviewRequest.includes('Toolgate code review') || !reviewRequest.includes('return a + b')) {
      throw new Error(`the review request lacks the schema or the diff: ${reviewRequest.slice(0, 1000)}`);
    }
    await runCommand(page, 'View: Focus Problems');
    await waitUntil('the review comment in Problems', async () => /negative numbers/.test(await problems.innerText()), {
      timeout: 30_000,
    });
    await shot('problems-review.png');
    log('Review Changes put the model\'s comment in Problems');

    // 6b. A review cancelled from its notification stops: the model's late answer never
    // reaches Problems, and the last review's comment stays.
    const slowMs = 8_000;
    model.answerNext({
      delayMs: slowMs,
      content: JSON.stringify({
        approved: false,
        comments: [{ path: 'calc.py', line: 2, severity: 'error', message: 'a late comment nobody should see' }],
      }),
    });
    const slowAsked = model.served();
    await runCommand(page, 'Toolgate: Review Changes');
    await answerInputBox(page, 'Working tree', 'Review Changes');
    await waitUntil('the slow review to reach the model', async () => model.served() > slowAsked, { timeout: 30_000 });
    const reviewing = page.locator('.notifications-toasts .notification-toast', { hasText: 'the model is reviewing the working tree' });
    await reviewing.getByRole('button', { name: 'Cancel' }).click();
    await page.locator('.statusbar', { hasText: 'Toolgate: cancelled' }).waitFor({ state: 'visible', timeout: 10_000 });
    await page.waitForTimeout(slowMs + 3_000);
    await runCommand(page, 'View: Focus Problems');
    const afterCancel = await problems.innerText();
    if (/late comment/.test(afterCancel) || !/negative numbers/.test(afterCancel)) {
      throw new Error(`a cancelled review changed Problems:\n${afterCancel.slice(0, 2000)}`);
    }
    await shot('review-cancelled.png');
    log('Cancel on the review notification stopped the review; Problems kept the last one');

    // 7. Ask Agent with Review: a run that changes nothing is approved without asking, the
    // tests run (test_mul still fails), and the loop's end is said in a notification.
    model.answerNext({ content: 'Nothing in calc.py needs to change.' });
    await runCommand(page, 'Toolgate: Ask Agent with Review');
    await answerInputBox(page, 'Check calc.py', 'Ask Agent with Review');
    await page
      .locator('.notifications-toasts', { hasText: 'Toolgate review loop: tests failed; approved after 1 round; tests: 1 passed, 1 failed' })
      .waitFor({ state: 'visible', timeout: 120_000 });
    await shot('review-loop.png');
    log('Ask Agent with Review ran the loop and said how it ended');

    // Checks on what reached the disk and the model: the accepted text was saved when the
    // server asked (before the tests ran), and the rejected proposal left no trace.
    const finalCalc = readText(calcPath);
    if (finalCalc !== ACCEPTED_CALC) {
      throw new Error(`calc.py on disk is not the accepted text:\n${finalCalc}`);
    }
    log('calc.py on disk holds the accepted text, not the rejected one');
    const toolMessages = model.requests.flatMap((request) =>
      (request.body.messages ?? []).filter((message) => message.role === 'tool').map((message) => JSON.stringify(message.content)),
    );
    if (!toolMessages.some((content) => content.includes(REJECT_REASON))) {
      throw new Error(`the rejection reason did not reach the model; tool messages: ${toolMessages.join(' | ').slice(0, 2000)}`);
    }
    const auth = model.requests.map((request) => request.headers.authorization);
    if (!auth.every((header) => header === `Bearer ${API_KEY}`)) {
      throw new Error(`the model server did not get the API key from SecretStorage: ${JSON.stringify(auth)}`);
    }

    // The transcript is on screen; its full text is checked from the log files below.
    await runCommand(page, 'Toolgate: Show Transcript');
    const output = page.locator('.panel .monaco-editor .view-lines').first();
    await waitUntil(
      'the transcript',
      // Only the lines in view are rendered: the last ones may all be the review loop's, so any
      // line in the transcript's own form will do (`Run completed`, `→ TOOL …`, `  TOOL: done`,
      // `Review loop: …`).
      async () => /Run \w+|→ \w+ |\w+: (done|accepted|rejected)|Review loop: /.test((await output.innerText()).replace(/\u00a0/g, ' ')),
      { timeout: 20_000 },
    );
    await shot('transcript.png');
    checkLogs = true;
    log('end-to-end scenario passed');
  } catch (error) {
    failed = true;
    log(`FAILED: ${error.stack ?? error}`);
    const page = browser?.pages()[0];
    if (page) {
      await page.screenshot({ path: path.join(opts.artifacts, 'failure.png') }).catch(() => {});
    }
  } finally {
    await browser?.close().catch(() => {});
    await server?.stop().catch(() => {});
    await model.close();
    if (server) {
      copyLogs(root, server, opts.artifacts);
      if (checkLogs) {
        try {
          checkTranscriptAndSecrets(server, checkLogs === 'secrets');
          log('the transcript shows each call and its decision; no log holds the API key');
        } catch (error) {
          failed = true;
          log(`FAILED: ${error.message}`);
        }
      }
    }
    if (!opts.keep && !failed) {
      fs.rmSync(root, { recursive: true, force: true });
    } else {
      log(`kept ${root}`);
    }
  }
  if (failed) {
    process.exitCode = 1;
  }
}

/**
 * PATH with `python3` as the given interpreter first: a Python the person has, without
 * Toolgate (checked), for the extension to make its environment with. code-server may take
 * the extension host's PATH from the login shell instead; e2e/firstrun.mjs checks that the
 * interpreter the extension reports using has no Toolgate either way.
 */
function pythonOnPath(root, basePython) {
  if (!basePython) {
    throw new Error('--first-run needs --base-python: a Python 3.10+ without Toolgate');
  }
  const bin = path.join(root, 'bin');
  fs.mkdirSync(bin, { recursive: true });
  fs.symlinkSync(basePython, path.join(bin, 'python3'));
  try {
    execFileSync(path.join(bin, 'python3'), ['-c', 'import toolgate'], { stdio: 'ignore' });
  } catch {
    return `${bin}${path.delimiter}${process.env.PATH ?? ''}`;
  }
  throw new Error(`${basePython} already has Toolgate: the first run needs a Python without it`);
}

/** Restricted Mode: the agent may not run tests; trusting the folder restarts the server trusted. */
async function restrictedScenario(page, model, server, shot) {
  await waitUntil(
    'the server to start (status bar "Toolgate: idle")',
    async () => (await page.locator('.statusbar').innerText()).includes('Toolgate: idle'),
    { timeout: 60_000 },
  );
  await runCommand(page, 'Toolgate: Ask Agent');
  await answerInputBox(page, 'Run the tests', 'Ask Agent');
  await waitUntil('the model to read the refusal', () => model.served() >= 2, { timeout: 60_000 });
  const toolMessages = (model.requests[1].body.messages ?? []).filter((message) => message.role === 'tool');
  const refusal = JSON.stringify(toolMessages.at(-1)?.content ?? '');
  if (!/trust|restrict/i.test(refusal)) {
    throw new Error(`run_tests was not refused for the restricted workspace: ${refusal.slice(0, 1000)}`);
  }
  log(`refused in Restricted Mode: ${refusal.slice(0, 200)}`);
  await runCommand(page, 'Toolgate: Show Transcript');
  await page.waitForTimeout(500);
  await shot('restricted.png');

  await runCommand(page, 'Workspaces: Manage Workspace Trust');
  const trustButton = page.locator('.workspace-trust-editor .monaco-button', { hasText: /^Trust$/ }).first();
  await trustButton.waitFor({ state: 'visible', timeout: 20_000 });
  await trustButton.click();
  await page
    .locator('.notifications-toasts', { hasText: 'the workspace is trusted now' })
    .waitFor({ state: 'visible', timeout: 60_000 });
  log('trust granted; the server restarted');
  const logs = path.join(server.dirs.userData, 'logs');
  const serverLog = fs
    .readdirSync(logs, { recursive: true })
    .map((name) => path.join(logs, String(name)))
    .find((file) => file.endsWith('Toolgate Server.log'));
  const text = serverLog ? fs.readFileSync(serverLog, 'utf8') : '';
  const first = text.indexOf('"trusted": false');
  const second = text.indexOf('"trusted": true', first);
  if (first < 0 || second < 0) {
    throw new Error(`the server was not started untrusted and then trusted (see ${serverLog})`);
  }
  log('restricted-mode scenario passed');
}

/** The Output channel "Toolgate" as written to disk: every call with its decision, never the key. */
function checkTranscriptAndSecrets(server, secretsOnly = false) {
  const files = [];
  const walk = (dir) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        walk(full);
      } else {
        files.push(full);
      }
    }
  };
  walk(path.join(server.dirs.userData, 'logs'));
  // A log output channel keeps its file under the extension's own folder of the logs.
  const transcript = files.find((file) => /toolgate-vscode[\\/]Toolgate\.log$/.test(file));
  if (secretsOnly) {
    for (const file of [...files, server.logFile]) {
      if (fs.readFileSync(file, 'utf8').includes(API_KEY)) {
        throw new Error(`the API key appears in ${file}`);
      }
    }
    return;
  }
  if (!transcript) {
    throw new Error('no log file of the "Toolgate" output channel');
  }
  const text = fs.readFileSync(transcript, 'utf8');
  for (const expected of ['→ write_file', '(waits for your review)', 'write_file: accepted', 'write_file: rejected', REJECT_REASON, '→ run_tests {}']) {
    if (!text.includes(expected)) {
      throw new Error(`the transcript lacks "${expected}":\n${text.slice(0, 3000)}`);
    }
  }
  // The person's transcript at the info level; the protocol (each event, streamed deltas, ids)
  // only at the debug level, shown here because code-server runs with --log trace.
  const lines = text.split('\n').filter((line) => /^\d{4}-\d\d-\d\d /.test(line));
  const leaked = lines.filter((line) => /"type":"text_delta"|^\S+ \S+ \[\w+\] event \{/.test(line) && !line.includes('[debug]'));
  if (leaked.length) {
    throw new Error(`protocol detail in the transcript above the debug level:\n${leaked.slice(0, 5).join('\n')}`);
  }
  if (!lines.some((line) => line.includes('[debug]') && line.includes('"type":"text_delta"'))) {
    throw new Error(`the transcript has no debug line of the protocol:\n${text.slice(0, 3000)}`);
  }
  const serverLog = files.find((file) => file.endsWith('Toolgate Server.log'));
  const serverText = serverLog ? fs.readFileSync(serverLog, 'utf8') : '';
  if (!serverText.includes('"command": "toolgate.reportDiagnostics"')) {
    throw new Error(`the extension did not report diagnostics after the accepted edit (see ${serverLog})`);
  }
  if (!serverText.includes('"apiKey": "***"')) {
    throw new Error(`the protocol trace does not show the masked initializationOptions (see ${serverLog})`);
  }
  for (const file of [...files, server.logFile]) {
    if (fs.readFileSync(file, 'utf8').includes(API_KEY)) {
      throw new Error(`the API key appears in ${file}`);
    }
  }
}

/** Keep code-server's log and the extension host's logs (the server's channel among them). */
function copyLogs(root, server, artifacts) {
  const logs = path.join(artifacts, 'logs');
  fs.rmSync(logs, { recursive: true, force: true });
  fs.mkdirSync(logs, { recursive: true });
  try {
    fs.copyFileSync(server.logFile, path.join(logs, 'code-server.log'));
    const userLogs = path.join(server.dirs.userData, 'logs');
    if (fs.existsSync(userLogs)) {
      fs.cpSync(userLogs, path.join(logs, 'user-data'), { recursive: true });
    }
  } catch (error) {
    log(`could not copy logs: ${error.message}`);
  }
}

main().catch((error) => {
  log(`FAILED: ${error.stack ?? error}`);
  process.exitCode = 1;
});
