// Builds Toolgate's wheel from this checkout into server/, for the .vsix to carry: the
// extension installs it into its own environment on first start (src/serverEnv.ts). The
// wheel's version must be the extension's: a .vsix always carries the server of its own commit.
//
//   node scripts/bundle-server.mjs      (npm run bundle-server; npm run package runs it)
//
// Python: $TOOLGATE_BUILD_PYTHON, else python3; it builds with `pip wheel` (pip's build
// isolation fetches setuptools from the configured index).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const client = path.join(here, '..');
const repo = path.join(client, '..');
const out = path.join(client, 'server');

const extensionVersion = JSON.parse(fs.readFileSync(path.join(client, 'package.json'), 'utf8')).version;
const pyproject = fs.readFileSync(path.join(repo, 'pyproject.toml'), 'utf8');
const serverVersion = /^version\s*=\s*"([^"]+)"/m.exec(pyproject)?.[1];
if (serverVersion !== extensionVersion) {
  console.error(
    `bundle-server: pyproject.toml says version ${serverVersion}, package.json ${extensionVersion}: ` +
      'the extension and its server are released together; make them equal.',
  );
  process.exit(1);
}

fs.rmSync(out, { recursive: true, force: true });
fs.mkdirSync(out, { recursive: true });
const python = process.env.TOOLGATE_BUILD_PYTHON || 'python3';
execFileSync(
  python,
  ['-m', 'pip', 'wheel', '--no-deps', '--disable-pip-version-check', '--quiet', '--wheel-dir', out, repo],
  { stdio: 'inherit' },
);
const wheels = fs.readdirSync(out).filter((name) => name.endsWith('.whl'));
if (wheels.length !== 1 || !wheels[0].startsWith(`toolgate-${extensionVersion}-`)) {
  console.error(`bundle-server: expected one toolgate-${extensionVersion} wheel in ${out}, found: ${wheels.join(', ') || 'none'}`);
  process.exit(1);
}
console.log(`bundle-server: ${path.join('server', wheels[0])} (${fs.statSync(path.join(out, wheels[0])).size} bytes)`);
