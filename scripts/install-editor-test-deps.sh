#!/usr/bin/env bash
# Install what the tests with other editors need, from Debian: Emacs with its LSP client eglot,
# and Neovim.
# Idempotent: returns at once when both are there (apt-get update only when something is missing).
set -euo pipefail

log() { printf '[install-editor-test-deps] %s\n' "$*" >&2; }

apt_packages=(emacs-nox elpa-eglot neovim)
missing=()
for pkg in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if ((${#missing[@]})); then
  log "apt: installing ${missing[*]}"
  SUDO=""
  [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  log "apt: all present"
fi
log "$(emacs --version | head -n 1); $(nvim --version | head -n 1)"
