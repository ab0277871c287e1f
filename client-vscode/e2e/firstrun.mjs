// The first run of a new person, in a real VS Code (code-server) with fresh user-data and
// extensions folders, no Toolgate setting at all, and on PATH a python3 (3.10 or newer) that
// has no Toolgate: the extension installs the server it carries into its own environment; the
// walkthrough opens by itself, finds the scripted model server on LM Studio's port (or the
// next of the probed ports that is free), and the sample task's diff is accepted and lands on
// disk. Then a reload: the warm start reuses the environment.
//
// The scripted server listens on a port the extension really probes, rather than the test
// setting the probed ports: a setting written for the test would be a setting the person does
// not have, and the point is that nothing is written by hand.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { openWorkbench, waitUntil } from './codeserver.mjs';

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
async function walkthroughButton(page, step, button, then) {
  const container = page.locator('.gettingStartedContainer');
  await waitUntil(`"${button}" to open what it opens`, async () => {
    await container.locator('.getting-started-step', { hasText: step }).first().click();
    await page.waitForTimeout(700);
    // Exact: a step's own title is a button too, and "Try a sample task" would match it.
    const link = container.getByRole('button', { name: button, exact: true }).first();
    await link.click({ timeout: 5000 });
    try {
      await then.waitFor({ state: 'visible', timeout: 10_000 });
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
export async function firstRunScenario({ page, model, server, vsix, workspace, expected, shot, log, artifacts }) {
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
  };
  fs.writeFileSync(path.join(artifacts, 'first-run.json'), `${JSON.stringify(summary, null, 2)}\n`);
  log(`first run: ${JSON.stringify(summary)}`);
}
