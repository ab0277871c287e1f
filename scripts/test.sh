#!/usr/bin/env bash
# Install everything and run every test: lint, the Python suite (engine, text protocol, language
# server, embedded local model, real VS Code, Emacs and Neovim end to end) and the extension's
# own checks.
# Safe to run again: each installer skips what is already there and reuses its caches.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

say() { printf '==> %s\n' "$*"; }
PY="${PYTHON:-python3}"

if [[ ! -x .venv/bin/python ]]; then
    say "creating .venv"
    "$PY" -m venv .venv
fi
say "installing toolgate with its test dependencies"
.venv/bin/python -m pip install -q --disable-pip-version-check -e ".[test]"

say "installing bubblewrap (the OS sandbox test runs and commands use)"
bash scripts/apt-install.sh bubblewrap

say "installing the embedded local model (first time: compiles for about 10 minutes)"
PYTHON=.venv/bin/python bash scripts/install-local-model.sh

say "installing what the VS Code end-to-end test needs (first time: a few minutes)"
bash scripts/install-vscode-test-deps.sh

say "installing what the other editors' tests need (Emacs with eglot, Neovim)"
bash scripts/install-editor-test-deps.sh

say "building and checking the VS Code extension (lint, types, unit tests, .vsix)"
(cd client-vscode && npm ci --no-audit --no-fund --loglevel=error && npm test && npm run package)

say "lint"
.venv/bin/ruff check server tests benchmarks

say "the Python test suite"
.venv/bin/python -m pytest
