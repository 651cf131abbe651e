#!/usr/bin/env bash
# Install the OpenAI Codex CLI used by the end-to-end tests. Idempotent: does nothing when that version is already there.
#
#   scripts/install-codex.sh            the pinned version into tests/e2e/.codex-cli/ (git-ignored)
#   scripts/install-codex.sh 0.172.0    that version into tests/e2e/.codex-cli-0.172.0/
#
# Why a private prefix and not a devDependency: the package pulls a ~315 MB native binary that only the e2e tests
# need, and the version is pinned exactly because the hook contract (trust hashes, event payloads) changes between
# releases.
#
# Why we call the platform binary directly: the wrapper (bin/codex.js) is a node launcher that looks the binary up at
# run time; the optional platform package is where the binary really is:
# node_modules/@openai/codex-<platform>/vendor/<triple>/bin/codex.
#
# Prints the binary's absolute path on stdout on success (everything else goes to stderr).
# Safe to run as root, from the repo root, with no stdin (CI).
set -euo pipefail

PINNED="0.171.0"
VERSION="${1:-$PINNED}"
[[ "$VERSION" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || { printf 'install-codex: ERROR: not a version: %s\n' "$VERSION" >&2; exit 2; }
REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [[ "$VERSION" == "$PINNED" ]]; then PREFIX="$REPO_ROOT/tests/e2e/.codex-cli"; else PREFIX="$REPO_ROOT/tests/e2e/.codex-cli-$VERSION"; fi

log() { printf 'install-codex: %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# Does this binary print the wanted version? (`codex --version` prints e.g. "codex-cli 0.171.0".)
version_ok() {
  local out
  out="$("$1" --version </dev/null 2>/dev/null)" || return 1
  [[ "$out" == *" $VERSION" || "$out" == "$VERSION" ]]
}

# Find the native binary among the optional platform packages (linux-x64, linux-arm64, darwin-*...): the first one
# that runs here.
find_binary() {
  local candidate
  for candidate in "$PREFIX"/node_modules/@openai/codex-*/vendor/*/bin/codex "$PREFIX"/node_modules/@openai/codex/vendor/*/codex/codex; do
    [[ -f "$candidate" ]] || continue
    [[ -x "$candidate" ]] || chmod +x "$candidate" 2>/dev/null || true
    if [[ -x "$candidate" ]] && version_ok "$candidate"; then
      printf '%s\n' "$candidate"
      return 0
    fi
  done
  return 1
}

if bin="$(find_binary)"; then
  log "Codex CLI $VERSION already installed"
  printf '%s\n' "$bin"
  exit 0
fi

command -v npm >/dev/null 2>&1 || die "npm not found on PATH"

log "installing @openai/codex@$VERSION into $PREFIX (about 315 MB)..."
mkdir -p "$PREFIX"
# A tiny package.json makes the prefix its own npm project, so npm never walks up to the repo's package.json.
if [[ ! -f "$PREFIX/package.json" ]]; then
  printf '{ "name": "pgx-e2e-codex-cli", "private": true }\n' >"$PREFIX/package.json"
fi
# A previous install of a different version would leave a stale platform package behind.
rm -rf "$PREFIX"/node_modules/@openai

# --include=optional: the native binary comes through an optionalDependency; a user-level omit=optional must not drop it.
if ! npm install --prefix "$PREFIX" --no-save --no-audit --no-fund --no-package-lock \
      --include=optional --loglevel=warn \
      "@openai/codex@$VERSION" </dev/null >&2; then
  die "npm install @openai/codex@$VERSION failed (is the npm registry reachable?)"
fi

if ! bin="$(find_binary)"; then
  found="$(ls -d "$PREFIX"/node_modules/@openai/codex-*/vendor/*/bin/codex 2>/dev/null | tr '\n' ' ' || true)"
  die "installed, but no working native binary with version $VERSION under $PREFIX/node_modules/@openai/codex-*/vendor/*/bin/codex (found: ${found:-none}; platform $(uname -s)-$(uname -m))"
fi

log "installed Codex CLI $VERSION"
printf '%s\n' "$bin"
