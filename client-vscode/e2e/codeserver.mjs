// Starts code-server (VS Code's own workbench, served over HTTP) in throw-away folders and drives
// it with playwright-core and Debian's Chromium.
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';

/** Where scripts/install-vscode-test-deps.sh put Node 24 and code-server. */
export function locateTools() {
  const cache = process.env.TOOLGATE_E2E_CACHE ?? path.join(os.homedir(), '.cache', 'toolgate-e2e');
  const envFile = path.join(cache, 'env.sh');
  const found = {};
  if (fs.existsSync(envFile)) {
    for (const line of fs.readFileSync(envFile, 'utf8').split('\n')) {
      const match = /^export (\w+)="(.*)"$/.exec(line.trim());
      if (match) {
        found[match[1]] = match[2];
      }
    }
  }
  const tools = {
    node: process.env.TOOLGATE_E2E_NODE ?? found.TOOLGATE_E2E_NODE,
    codeServer: process.env.TOOLGATE_E2E_CODE_SERVER ?? found.TOOLGATE_E2E_CODE_SERVER,
    chromium: process.env.TOOLGATE_E2E_CHROMIUM ?? found.TOOLGATE_E2E_CHROMIUM ?? '/usr/bin/chromium',
  };
  const missing = Object.entries(tools).filter(([, file]) => !file || !fs.existsSync(file));
  if (missing.length) {
    throw new Error(
      `missing ${missing.map(([name]) => name).join(', ')}: run \`bash scripts/install-vscode-test-deps.sh\` first`,
    );
  }
  return tools;
}

/** A free TCP port on 127.0.0.1. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Install the .vsix and start code-server on 127.0.0.1 with its own config, user-data,
 * extensions and HOME. Resolves to {url, stop(), logFile, dirs}.
 */
export async function startCodeServer({ tools, root, vsix, workspace, settings, workspaceTrust = false, env: extraEnv = {} }) {
  const dirs = {
    home: path.join(root, 'home'),
    userData: path.join(root, 'user-data'),
    extensions: path.join(root, 'extensions'),
    config: path.join(root, 'config.yaml'),
  };
  for (const dir of [dirs.home, dirs.userData, dirs.extensions]) {
    fs.mkdirSync(dir, { recursive: true });
  }
  // code-server is a remote window: machine-scoped settings (toolgate.pythonPath) are read
  // from the Machine settings, the others from the User settings.
  for (const scope of ['User', 'Machine']) {
    fs.mkdirSync(path.join(dirs.userData, scope), { recursive: true });
    fs.writeFileSync(path.join(dirs.userData, scope, 'settings.json'), JSON.stringify(settings, null, 2));
  }
  const port = await freePort();
  fs.writeFileSync(dirs.config, `bind-addr: 127.0.0.1:${port}\nauth: none\ncert: false\n`);
  const env = {
    ...process.env,
    HOME: dirs.home,
    XDG_CONFIG_HOME: path.join(dirs.home, '.config'),
    XDG_DATA_HOME: path.join(dirs.home, '.local', 'share'),
    XDG_CACHE_HOME: path.join(dirs.home, '.cache'),
    VSCODE_PROXY_URI: '',
    ...extraEnv,
  };
  const common = ['--config', dirs.config, '--user-data-dir', dirs.userData, '--extensions-dir', dirs.extensions];
  execFileSync(tools.node, [tools.codeServer, ...common, '--install-extension', vsix], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 120_000,
  });
  const logFile = path.join(root, 'code-server.log');
  const log = fs.openSync(logFile, 'a');
  const child = spawn(
    tools.node,
    [
      tools.codeServer,
      ...common,
      '--bind-addr', `127.0.0.1:${port}`,
      '--auth', 'none',
      '--disable-telemetry',
      '--disable-update-check',
      ...(workspaceTrust ? [] : ['--disable-workspace-trust']),
      '--disable-getting-started-override',
      '--log', 'trace',
      workspace,
    ],
    { env, stdio: ['ignore', log, log], detached: true },
  );
  const url = `http://127.0.0.1:${port}/`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) {
      throw new Error(`code-server exited with ${child.exitCode}; see ${logFile}`);
    }
    try {
      const response = await fetch(`${url}healthz`);
      if (response.ok) {
        break;
      }
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) {
      throw new Error(`code-server did not answer within 60 s; see ${logFile}`);
    }
    await sleep(250);
  }
  const stop = async () => {
    if (child.exitCode === null) {
      try {
        process.kill(-child.pid, 'SIGTERM');
      } catch {
        // Already gone.
      }
      for (let i = 0; i < 40 && child.exitCode === null; i++) {
        await sleep(100);
      }
      if (child.exitCode === null) {
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {
          // Already gone.
        }
      }
    }
    fs.closeSync(log);
  };
  return { url, stop, logFile, dirs };
}

/** Launch Debian's Chromium headless (never a downloaded browser). */
export async function launchBrowser(tools, profileDir) {
  return chromium.launchPersistentContext(profileDir, {
    executablePath: tools.chromium,
    headless: true,
    viewport: { width: 1440, height: 900 },
    // The chat view's Copy writes the clipboard, which the test reads back.
    permissions: ['clipboard-read', 'clipboard-write'],
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** Open the workbench on a folder and wait until it is drawn. */
export async function openWorkbench(page, url, folder) {
  // A machine busy with other work may take a while to serve the workbench the first time.
  await page.goto(`${url}?folder=${encodeURIComponent(folder)}`, { timeout: 120_000 });
  await page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
  await page.locator('.statusbar').waitFor({ timeout: 60_000 });
}

/**
 * Run a command from the palette by its label, retrying until the row exists (an extension's
 * commands show up a few seconds after the workbench does).
 */
/**
 * Open the command palette on `query` until a row holding `rowText` shows, then `act` on it.
 * Retried: while the workbench settles, something else (a panel the extension reveals, say)
 * may take the focus and close the palette.
 */
export async function inPalette(page, query, rowText, act = async () => {}, { timeout = 60_000 } = {}) {
  const deadline = Date.now() + timeout;
  let lastError;
  while (Date.now() < deadline) {
    await page.keyboard.press('Escape');
    await page.keyboard.press('F1');
    const input = page.locator('.quick-input-widget input.input');
    try {
      await input.waitFor({ state: 'visible', timeout: 5000 });
      await input.fill(`>${query}`, { timeout: 5000 });
      const row = page.locator('.quick-input-list .monaco-list-row', { hasText: rowText }).first();
      await row.waitFor({ state: 'visible', timeout: 3000 });
      await act(row);
      return;
    } catch (error) {
      lastError = error;
      await sleep(1000);
    }
  }
  throw new Error(`"${rowText}" not found in the palette: ${lastError?.message}`);
}

/** Run a command by its palette label. */
export async function runCommand(page, label, options) {
  await inPalette(page, label, label, (row) => row.click(), options);
}

/**
 * Type into the input box a command opened and press Enter. `expect` is text of its title or
 * prompt: it tells the input box apart from the palette that opened it.
 */
export async function answerInputBox(page, text, expect) {
  const widget = page.locator('.quick-input-widget', { hasText: expect });
  await widget.waitFor({ state: 'visible', timeout: 15_000 });
  const input = widget.locator('input.input');
  await waitUntil('the input box to replace the palette', async () => !(await input.inputValue()).startsWith('>'), {
    timeout: 15_000,
  });
  await input.fill(text);
  await input.press('Enter');
  await widget.waitFor({ state: 'hidden', timeout: 15_000 });
}

/** Poll until `check()` returns a truthy value; throws the description on timeout. */
export async function waitUntil(description, check, { timeout = 60_000, interval = 250 } = {}) {
  const deadline = Date.now() + timeout;
  let lastError;
  while (Date.now() < deadline) {
    try {
      const value = await check();
      if (value) {
        return value;
      }
    } catch (error) {
      lastError = error;
    }
    await sleep(interval);
  }
  throw new Error(`timed out waiting for ${description}${lastError ? `: ${lastError.message}` : ''}`);
}
