// The first run of a new person, in a real VS Code (code-server) with fresh user-data and
// extensions folders, no Toolgate setting at all, and on PATH a python3 (3.10 or newer) that
// has no Toolgate: the extension installs the server it carries into its own environment; the
// walkthrough opens by itself, finds the scripted model server on LM Studio's port (or the
// next of the probed ports that is free), and the sample task's diff is accepted and lands on
// disk (with Check Setup pressed on the way, before a model is chosen: the report says what is
// missing). Then a reload: the warm start reuses the environment. Then the walkthrough's other
// buttons, as a person setting up further would press them (setupButtons below): Test
// Connection, Check Setup, Install the Embedded Model, and the same two again on the model
// installed, with a run that goes to it.
//
// The scripted server listens on a port the extension really probes, rather than the test
// setting the probed ports: a setting written for the test would be a setting the person does
// not have, and the point is that nothing is written by hand.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { answerInputBox, openWorkbench, runCommand, waitUntil } from './codeserver.mjs';

/** The ports the server probes (toolgate.setup.local_servers), LM Studio's first. */
export const PROBED_PORTS = [1234, 8000, 8080, 11434];

/** The first probed port nothing listens on, so the scripted server can take it. */
export async function freeProbedPort() {
  for (const port of PROBED_PORTS) {
    const free = await new Promise((resolve) => {
      const probe = net.createServer();
      probe.once('error', () => resolve(false));
      probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
    });
    if (free) {
      return port;
    }
  }
  throw new Error(`every probed port (${PROBED_PORTS.join(', ')}) is taken on this machine: the first-run test needs one`);
}

/** The model's turns for the sample task: the fix, the tests (they save the file), the answer. */
export function firstRunScript({ accepted }) {
  return [
    {
      content: 'add subtracts; here is the fix.',
      tool_calls: [{ name: 'write_file', arguments: { path: 'calc.py', content: accepted } }],
    },
    { content: 'Running the tests.', tool_calls: [{ name: 'run_tests', arguments: {} }] },
    { content: 'add is fixed.' },
  ];
}

/** The connection test's request (it offers report_ready) is answered outside the script. */
export function answerConnectionTest(body) {
  const tools = (body.tools ?? []).map((tool) => tool.function?.name);
  if (tools.includes('report_ready')) {
    return { content: '', tool_calls: [{ name: 'report_ready', arguments: { ready: true } }] };
  }
  return undefined;
}

const statusBar = (page) => page.locator('.statusbar');

async function idle(page, timeout) {
  await waitUntil('the server to be ready (status bar "Toolgate: idle")', async () => (await statusBar(page).innerText()).includes('Toolgate: idle'), {
    timeout,
    interval: 500,
  });
}

/**
 * Expand a walkthrough step by its title and press the button its description links, until
 * `then` (what the button opens) shows: a click during the step's unfolding may miss.
 */
async function walkthroughButton(page, step, button, then, { wait = 10_000 } = {}) {
  const container = page.locator('.gettingStartedContainer');
  await waitUntil(`"${button}" to open what it opens`, async () => {
    const stepTitle = container.locator('.getting-started-step', { hasText: step }).first();
    // The slide not shown keeps its buttons, disabled.
    if (await stepTitle.isDisabled()) {
      // Back on the list of walkthroughs (Escape goes there): open this one, as a person would.
      await container.locator('button:not([disabled])', { hasText: 'Get Started with Toolgate' }).first().click({ timeout: 5000 });
      await page.waitForTimeout(700);
    }
    await stepTitle.click({ timeout: 5000 });
    await page.waitForTimeout(700);
    // Exact: a step's own title is a button too, and "Try a sample task" would match it.
    const link = container.getByRole('button', { name: button, exact: true }).first();
    await link.click({ timeout: 5000 });
    try {
      await then.waitFor({ state: 'visible', timeout: wait });
      return true;
    } catch {
      return false;
    }
  }, { timeout: 90_000, interval: 500 });
}

/** The "Server ready in N s" and "Server installed in N s" lines of every window's server log. */
export function serverTimings(userData) {
  const logs = path.join(userData, 'logs');
  const files = fs.existsSync(logs)
    ? fs
        .readdirSync(logs, { recursive: true })
        .map((name) => path.join(logs, String(name)))
        .filter((file) => file.endsWith('Toolgate Server.log'))
        .sort()
    : [];
  const text = files.map((file) => fs.readFileSync(file, 'utf8')).join('\n');
  const seconds = (pattern) => [...text.matchAll(pattern)].map((match) => Number(match[1]));
  const base = /Installing the bundled server with (\S+) \(Python ([\d.]+)\)/.exec(text);
  return {
    base: base ? { python: base[1], version: base[2] } : undefined,
    installed: seconds(/Server installed in ([\d.]+) s/g),
    ready: seconds(/Server ready in ([\d.]+) s/g),
    bundledStarts: (text.match(/\(from bundled\)/g) ?? []).length,
    text,
  };
}

/**
 * The scenario. `steps` counts what the person does from the installed .vsix to the accepted
 * diff: each click or key press the test makes on their behalf.
 */
export async function firstRunScenario({ page, model, server, vsix, workspace, expected, shot, log, artifacts, localModel }) {
  const steps = ['install the .vsix (code --install-extension)'];
  const opened = Date.now();

  // The walkthrough opens by itself; the server installs itself meanwhile.
  const walkthrough = page.locator('.gettingStartedContainer', { hasText: 'Get Started with Toolgate' });
  await walkthrough.waitFor({ state: 'visible', timeout: 120_000 });
  log('the walkthrough opened by itself');
  await page.waitForTimeout(500);
  await shot('walkthrough-opened.png');
  await idle(page, 900_000);
  const firstReady = (Date.now() - opened) / 1000;
  log(`the bundled server is installed and ready, ${firstReady.toFixed(1)} s after the window opened`);

  // Check Setup before any model is chosen: the report says what is missing and names the
  // server found on this machine. Not among the steps: the person does not need it.
  const beforeModel = await checkSetup(page, server, 'A run cannot start until this is fixed', shot, 'walkthrough-check-setup-no-model.png');
  expectIn(
    beforeModel,
    ['endpoint: no model endpoint is configured, and the embedded model is not installed', `${model.baseUrl} serves scripted-model`],
    'the setup report before a model is chosen',
  );
  await toast(page, 'a run cannot start yet; the report says what to fix').first().waitFor({ state: 'visible', timeout: 15_000 });
  log('Check Setup before a model: a run cannot start; the report names the scripted server');
  // In this order: the palette's Escape reaches the walkthrough once the panel is hidden, and
  // there Escape goes back to the list of walkthroughs.
  await clearNotifications(page);
  await hidePanel(page);

  // Find Model Servers: the scripted server on a probed port, with its model.
  const row = page.locator('.quick-input-list .monaco-list-row', { hasText: 'scripted-model' }).first();
  await walkthroughButton(page, 'Find a model on this machine', 'Find Model Servers', row);
  steps.push('walkthrough: Find Model Servers');
  const rowText = (await row.innerText()).replace(/\s+/g, ' ');
  if (!rowText.includes(model.baseUrl)) {
    throw new Error(`the found model does not name its server ${model.baseUrl}: ${rowText}`);
  }
  await shot('walkthrough-models.png');
  await row.click();
  steps.push('pick scripted-model in the list');
  log(`picked ${rowText}`);

  // The connection test says how the model calls tools.
  const tested = page.locator('.notifications-toasts', { hasText: 'native tool calling works' });
  await tested.waitFor({ state: 'visible', timeout: 60_000 });
  await page.waitForTimeout(500);
  await shot('walkthrough.png');
  log('the connection test passed: native tool calling');

  // The sample task, as offered.
  const input = page.locator('.quick-input-widget', { hasText: 'Try a Sample Task' }).locator('input.input');
  await walkthroughButton(page, 'Try a sample task', 'Try a Sample Task', input);
  steps.push('walkthrough: Try a Sample Task');
  await waitUntil('the sample task in the input box', async () => (await input.inputValue()).startsWith('Read this workspace'));
  await input.press('Enter');
  steps.push('Enter: send the sample task as offered');

  // The first diff: Accept.
  const diffTab = page.locator('.tabs-container .tab', { hasText: 'write_file: calc.py' });
  await diffTab.first().waitFor({ timeout: 120_000 });
  await page.locator('.monaco-diff-editor').first().waitFor({ timeout: 30_000 });
  const proposed = page.locator('.monaco-diff-editor .editor.modified .view-lines').first();
  await waitUntil('the proposed text in the diff', async () => (await proposed.innerText()).replace(/\u00a0/g, ' ').includes('return a + b'), {
    timeout: 60_000,
  });
  await page.waitForTimeout(800);
  await shot('first-diff.png');
  const accept = page.locator('.editor-actions [aria-label^="Accept Proposed Edit"]').first();
  await accept.waitFor({ state: 'visible', timeout: 15_000 });
  await accept.click();
  steps.push('Accept the diff');
  const calc = path.join(workspace, 'calc.py');
  await waitUntil('the accepted calc.py on disk', () => fs.existsSync(calc) && fs.readFileSync(calc, 'utf8') === expected, {
    timeout: 120_000,
  });
  log('the accepted diff is on disk');
  await shot('first-diff-accepted.png');

  // A warm start: the same window again, the environment reused.
  const reloaded = Date.now();
  await page.reload();
  await openWorkbench(page, server.url, workspace);
  await idle(page, 120_000);
  const warmReady = (Date.now() - reloaded) / 1000;
  log(`warm start: ready ${warmReady.toFixed(1)} s after the reload`);

  const timings = serverTimings(server.dirs.userData);
  if (timings.installed.length !== 1 || timings.bundledStarts < 2 || !timings.base) {
    throw new Error(`expected one install and two starts of the bundled server:\n${timings.text.slice(-3000)}`);
  }
  // The environment was made with a Python that has no Toolgate of its own.
  const own = spawnSync(timings.base.python, ['-c', 'import toolgate'], { stdio: 'ignore' });
  if (own.status === 0) {
    throw new Error(`${timings.base.python} has Toolgate: the first run was meant to start without it`);
  }
  log(`the environment was made with ${timings.base.python} (Python ${timings.base.version}), which has no Toolgate`);
  const summary = {
    vsixBytes: fs.statSync(vsix).size,
    basePython: timings.base,
    firstStartSeconds: { windowToReady: firstReady, install: timings.installed[0], serverReady: timings.ready[0] },
    warmStartSeconds: { reloadToReady: warmReady, serverReady: timings.ready.at(-1) },
    steps,
    checkSetupBeforeModel: beforeModel,
  };
  fs.writeFileSync(path.join(artifacts, 'first-run.json'), `${JSON.stringify(summary, null, 2)}\n`);
  log(`first run: ${JSON.stringify(summary)}`);

  summary.setupButtons = await setupButtons({ page, model, server, shot, log, localModel });
  fs.writeFileSync(path.join(artifacts, 'first-run.json'), `${JSON.stringify(summary, null, 2)}\n`);
}

/** The Toolgate settings in the person's User settings.json (what the extension wrote). */
export function userSettings(userData) {
  const file = path.join(userData, 'User', 'settings.json');
  const all = JSON.parse(fs.readFileSync(file, 'utf8'));
  return Object.fromEntries(Object.entries(all).filter(([key]) => key.startsWith('toolgate.')));
}

/**
 * The last report the "Toolgate Setup" Output channel shows, read from the file the editor
 * keeps the channel in (the panel draws only the lines that fit; the file has them all).
 */
export function lastSetupReport(userData) {
  const logs = path.join(userData, 'logs');
  const text = fs
    .readdirSync(logs, { recursive: true })
    .map((name) => path.join(logs, String(name)))
    .filter((file) => file.endsWith('Toolgate Setup.log'))
    .sort()
    .map((file) => fs.readFileSync(file, 'utf8'))
    .join('\n');
  // Clearing the channel does not empty its file: each report starts with the doctor's header.
  const headers = [...text.matchAll(/^toolgate \S+ doctor — /gm)];
  return headers.length ? text.slice(headers.at(-1).index) : '';
}

/**
 * Put into the editor's HOME what an earlier install of the embedded model left on this
 * machine: the runtime's kept wheel (so nothing is compiled, which takes about 10 minutes)
 * and the assembled model file (so its 470 MB of parts are not downloaded). The install the
 * button starts still runs whole in the extension's own environment: the runtime installed
 * from the kept wheel, its server packages from the package index, the model file verified,
 * and a one-token completion.
 */
export function prepareModelCache(home, { wheels, modelFile }) {
  if (!wheels || !modelFile) {
    throw new Error('--first-run needs --runtime-wheels DIR and --model-file FILE: the embedded model an earlier install left');
  }
  const cache = path.join(home, '.cache', 'toolgate');
  const kept = path.join(cache, 'wheels', path.basename(wheels));
  fs.mkdirSync(kept, { recursive: true });
  for (const name of fs.readdirSync(wheels).filter((each) => each.endsWith('.whl'))) {
    fs.copyFileSync(path.join(wheels, name), path.join(kept, name));
  }
  const models = path.join(cache, 'models');
  fs.mkdirSync(models, { recursive: true });
  const target = path.join(models, path.basename(modelFile));
  try {
    fs.linkSync(modelFile, target);
  } catch {
    fs.symlinkSync(modelFile, target);
  }
  const sidecar = `${modelFile}.verified.json`;
  if (fs.existsSync(sidecar)) {
    fs.copyFileSync(sidecar, `${target}.verified.json`);
  }
}

/** Hide the bottom panel (the report), so the screenshots that follow show the editor whole. */
async function hidePanel(page) {
  await runCommand(page, 'View: Hide Panel');
  await page.locator('.part.panel').waitFor({ state: 'hidden', timeout: 15_000 });
}

async function clearNotifications(page) {
  await runCommand(page, 'Notifications: Clear All Notifications');
  await waitUntil('the notifications to be cleared', async () => (await page.locator('.notifications-toasts .notification-toast').count()) === 0, {
    timeout: 15_000,
  });
}

const toast = (page, text) => page.locator('.notifications-toasts .notification-toast', { hasText: text });

/** Check Setup from the walkthrough: the report, from the Output channel, once it says `expect`. */
async function checkSetup(page, server, expect, shot, name) {
  // The Output view draws spaces as no-break spaces.
  const panel = page.locator('.part.panel', { hasText: new RegExp(expect.replace(/ /g, '\\s')) });
  await walkthroughButton(page, 'The server installs itself', 'Check Setup', panel, { wait: 180_000 });
  await page.waitForTimeout(500);
  await shot(name);
  return waitUntil(`the setup report to say "${expect}"`, () => {
    const report = lastSetupReport(server.dirs.userData);
    return report.includes(expect) && report.includes('A run can') ? report : undefined;
  }, { timeout: 30_000 });
}

function expectIn(report, lines, what) {
  const absent = lines.filter((line) => !report.includes(line));
  if (absent.length) {
    throw new Error(`${what} lacks ${absent.map((line) => JSON.stringify(line)).join(', ')}:\n${report}`);
  }
}

/**
 * The walkthrough's other buttons, on the window whose first diff was accepted. With the
 * scripted model chosen: Test Connection sends the model one request; Check Setup shows the
 * doctor's report. Then Install the Embedded Model: the install's progress, its time, the
 * settings that pointed at the scripted model removed, and the server started again on the
 * embedded model; Test Connection and Check Setup (with the model's self-check) say so, and a
 * run starts the model and sends the scripted server nothing.
 */
async function setupButtons({ page, model, server, shot, log, localModel }) {
  const done = {};
  // After the reload: Get Started must show the walkthrough itself, its steps (the list of
  // walkthroughs on the Welcome page names it too).
  await runCommand(page, 'Toolgate: Get Started');
  await page
    .locator('.gettingStartedContainer .getting-started-step', { hasText: 'Test the connection' })
    .first()
    .waitFor({ state: 'visible', timeout: 60_000 });
  await shot('walkthrough-reopened.png');

  // Test Connection, on the scripted model the person picked.
  const chosen = userSettings(server.dirs.userData);
  if (chosen['toolgate.baseUrl'] !== model.baseUrl || chosen['toolgate.model'] !== 'scripted-model') {
    throw new Error(`picking the model did not write its settings: ${JSON.stringify(chosen)}`);
  }
  await clearNotifications(page);
  const asked = model.intercepted.length;
  await walkthroughButton(page, 'Test the connection', 'Test Connection', toast(page, 'native tool calling works'), { wait: 60_000 });
  if (model.intercepted.length <= asked) {
    throw new Error('Test Connection said the model works without asking it');
  }
  await shot('walkthrough-test-connection.png');
  log('Test Connection: the scripted model answered with a native tool call');

  // Check Setup: a run can start, on the scripted model.
  let report = await checkSetup(page, server, `model scripted-model answers`, shot, 'walkthrough-check-setup.png');
  expectIn(report, [`endpoint: ${model.baseUrl}: model scripted-model answers; native tool calling works`, 'A run can start here.'], 'the setup report');
  done.checkSetup = report;
  log('Check Setup: the report says a run can start on the scripted model');

  // Install the Embedded Model.
  prepareModelCache(server.dirs.home, localModel);
  await clearNotifications(page);
  const before = model.requests.length;
  const installing = toast(page, 'installing the embedded model');
  await walkthroughButton(page, 'Or install the embedded model', 'Install the Embedded Model', installing);
  await page.waitForTimeout(1500);
  await shot('walkthrough-installing-model.png');
  log('Install the Embedded Model: the install is under way');
  const installed = toast(page, 'the embedded model is installed');
  const failed = toast(page, 'did not install');
  await waitUntil('the embedded model to install', async () => (await failed.count()) > 0 || (await installed.count()) > 0, {
    timeout: 900_000,
    interval: 1000,
  });
  if (await failed.count()) {
    throw new Error(`the embedded model did not install:\n${serverTimings(server.dirs.userData).text.slice(-4000)}`);
  }
  const said = (await installed.first().innerText()).replace(/\s+/g, ' ');
  done.installMessage = said;
  log(said);
  const left = userSettings(server.dirs.userData);
  if ('toolgate.baseUrl' in left || 'toolgate.model' in left) {
    throw new Error(`the install left the scripted model's settings in place: ${JSON.stringify(left)}`);
  }
  // The install then starts the server again and tests the connection: the embedded model.
  const embedded = 'runs use the embedded local model';
  await toast(page, embedded).first().waitFor({ state: 'visible', timeout: 180_000 });
  await idle(page, 180_000);
  await shot('walkthrough-model-installed.png');
  const serverLog = serverTimings(server.dirs.userData).text;
  expectIn(serverLog, ['-m toolgate model install', 'its parts are not downloaded', 'self-check answered:'], 'the server log of the install');
  log('the embedded model is installed; the settings point at no server; the server started again on it');

  // Test Connection and Check Setup, now on the embedded model.
  await clearNotifications(page);
  await walkthroughButton(page, 'Test the connection', 'Test Connection', toast(page, embedded), { wait: 60_000 });
  report = await checkSetup(page, server, embedded, shot, 'walkthrough-check-setup-embedded.png');
  expectIn(report, [`endpoint: none configured: ${embedded}`, 'installed; it answers', 'A run can start here.'], 'the setup report');
  done.checkSetupEmbedded = report;
  log('Check Setup: the embedded model is installed and answers its self-check');

  // A run goes to the embedded model: the server starts it, and the scripted server hears nothing.
  await clearNotifications(page);
  await runCommand(page, 'Toolgate: Ask Agent');
  await answerInputBox(page, 'Say which model you are, in one sentence. Change no file.', 'Ask Agent');
  const using = await waitUntil('the run to start the embedded model', () => {
    const line = serverTimings(server.dirs.userData).text.split('\n').find((each) => each.includes('Using the embedded local model'));
    return line;
  }, { timeout: 300_000, interval: 1000 });
  done.run = using.trim();
  log(`the run: ${done.run}`);
  await shot('embedded-model-run.png');
  await runCommand(page, 'Toolgate: Stop Agent');
  await idle(page, 300_000);
  if (model.requests.length !== before) {
    throw new Error(`a run on the embedded model sent the scripted server ${model.requests.length - before} request(s)`);
  }
  log('the run used the embedded model and sent the scripted server nothing');
  return done;
}
