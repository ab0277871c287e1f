// Bundles the extension into dist/extension.js (CommonJS, as VS Code loads it) and the chat
// view's page script into dist/webview.js.
import * as esbuild from 'esbuild';
import fs from 'node:fs';

const production = process.argv.includes('--production');
const watch = process.argv.includes('--watch');

const options = {
  entryPoints: ['src/extension.ts'],
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node18',
  outfile: 'dist/extension.js',
  external: ['vscode'],
  sourcemap: !production,
  minify: production,
  logLevel: 'info',
};

// The chat view's page script runs in the webview (a browser), not in the extension host.
const webview = {
  entryPoints: ['src/webview/main.ts'],
  bundle: true,
  format: 'iife',
  platform: 'browser',
  target: 'es2022',
  outfile: 'dist/webview.js',
  sourcemap: !production,
  minify: production,
  logLevel: 'info',
};

// The chat view draws the editor's own icons: the codicon font and its stylesheet, bundled.
fs.mkdirSync('dist/codicons', { recursive: true });
for (const file of ['codicon.css', 'codicon.ttf']) {
  fs.copyFileSync(`node_modules/@vscode/codicons/dist/${file}`, `dist/codicons/${file}`);
}

if (watch) {
  for (const each of [options, webview]) {
    const context = await esbuild.context(each);
    await context.watch();
  }
} else {
  await Promise.all([esbuild.build(options), esbuild.build(webview)]);
}
