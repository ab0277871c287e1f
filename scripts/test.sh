#!/usr/bin/env bash
# Install everything and run every test: lint, type check, dead-code check, the Python suite
# (engine, text protocol, language server, embedded local model, real VS Code, Emacs and Neovim
# end to end) and the extension's own checks.
#
#   bash scripts/test.sh           everything, as CI runs it
#   bash scripts/test.sh --quick   the inner loop: lint, types, dead code and the Python suite
#                                  without the embedded model, the real VS Code, the other
#                                  editors, the MCP conformance suite and the peer benchmark's
#                                  peer (none of them is installed), one pytest worker per
#                                  core; extra arguments go to pytest, e.g. --quick -x -k review
#
# Safe to run again: each installer skips what is already there and reuses its caches.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

say() { printf '==> %s\n' "$*"; }
PY="${PYTHON:-python3}"

quick=0
if [[ "${1:-}" == "--quick" ]]; then
    quick=1
    shift
fi

if [[ ! -x .venv/bin/python ]]; then
    say "creating .venv"
    "$PY" -m venv .venv
fi
say "installing toolgate with its test dependencies"
.venv/bin/python -m pip install -q --disable-pip-version-check -e ".[test]"

say "installing bubblewrap (the OS sandbox test runs and commands use)"
bash scripts/apt-install.sh bubblewrap

if [[ $quick == 0 ]]; then
    say "installing the embedded local model (first time: compiles for about 10 minutes)"
    PYTHON=.venv/bin/python bash scripts/install-local-model.sh

    say "installing what the VS Code end-to-end test needs (first time: a few minutes)"
    bash scripts/install-vscode-test-deps.sh

    say "installing the official MCP conformance suite and its Node (the MCP tests run it)"
    bash scripts/install-mcp-conformance.sh

    say "installing what the other editors' tests need (Emacs with eglot, Neovim)"
    bash scripts/install-editor-test-deps.sh

    say "building and checking the VS Code extension (lint, types, unit tests, .vsix)"
    (cd client-vscode && npm ci --no-audit --no-fund --loglevel=error && npm test && npm run package)

    say "installing mini-swe-agent, the peer the peer benchmark's smoke test runs (tests/peers)"
    # Pinned, into its own venv under ~/.cache/toolgate/peers/, as the benchmark installs it.
    .venv/bin/python -m benchmarks.peers --install-only --agents mini-swe-agent

    say "installing the TypeScript ACP SDK the ACP client test drives toolgate acp with"
    # `npm install` with the committed lock, not `npm ci`: acpx's file-safety dependency lists
    # prebuilt binaries for every platform; a registry mirror that carries only this platform's
    # leaves the others out of the lock, and `npm ci` then refuses the lock as out of sync.
    (cd tests/acp/ts && npm install --no-audit --no-fund --loglevel=error)
fi

say "lint"
.venv/bin/ruff check server tests benchmarks
.venv/bin/ruff format --check server tests benchmarks

say "type check (mypy, configured in pyproject.toml)"
.venv/bin/mypy

say "dead-code check (vulture, configured in pyproject.toml)"
.venv/bin/vulture

if [[ $quick == 1 ]]; then
    say "the Python test suite, without the embedded model, VS Code and the other editors"
    # One worker per core; `-n 0` among the arguments runs it in one process again.
    # Quick runs install no Node and no peer agent: the MCP conformance tests and the peer
    # benchmark's smoke test skip, saying so (the full run installs them, and there they fail
    # when one is missing).
    TOOLGATE_TESTS_QUICK=1 .venv/bin/python -m pytest -m "not local_model and not vscode" \
        --ignore=tests/editors -n auto "$@"
else
    say "the Python test suite"
    # One worker per core, each taking whole files: a file's tests share its module fixtures
    # (one .vsix, one model server). `-n 0` among the arguments runs it all in one process.
    # The slowest tests are listed at the end, to watch against CI's limit.
    .venv/bin/python -m pytest -n auto --dist loadfile --durations=25 "$@"
fi
