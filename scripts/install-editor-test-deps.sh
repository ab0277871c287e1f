#!/usr/bin/env bash
# Install what the tests with other editors need, from Debian: Emacs with its LSP client eglot,
# and Neovim.
# Idempotent: returns at once when they are there.
set -euo pipefail

log() { printf '[install-editor-test-deps] %s\n' "$*" >&2; }

bash "$(dirname "${BASH_SOURCE[0]}")/apt-install.sh" emacs-nox elpa-eglot neovim
log "$(emacs --version | head -n 1); $(nvim --version | head -n 1)"
