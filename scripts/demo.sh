#!/usr/bin/env bash
# Install Toolgate with its embedded local model and run the demo: an agent fixes a failing test
# in a throw-away project, showing each proposed diff, the test results and the commit.
# No API key or model server needed. Pass demo flags through, e.g. --approve ask, or
# --base-url URL --model NAME to use another OpenAI-compatible endpoint.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

say() { printf '==> %s\n' "$*"; }
PY="${PYTHON:-python3}"

if [[ ! -x .venv/bin/python ]]; then
    say "creating .venv"
    "$PY" -m venv .venv
fi
say "installing toolgate"
.venv/bin/python -m pip install -q --disable-pip-version-check -e .
say "installing the embedded local model (first time: compiles for about 10 minutes)"
PYTHON=.venv/bin/python bash scripts/install-local-model.sh
say "running the demo"
exec .venv/bin/toolgate demo "$@"
