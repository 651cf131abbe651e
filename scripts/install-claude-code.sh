#!/usr/bin/env bash
# Install a Claude Code CLI used by the end-to-end tests. Idempotent: does nothing when that version is already there.
#
#   scripts/install-claude-code.sh            the pinned version (CI's matrix and e2e suite) into tests/e2e/.cc/
#   scripts/install-claude-code.sh newest     the newest release CI checks (NEWEST below) into tests/e2e/.cc-<version>/
#   scripts/install-claude-code.sh 2.1.332    that version into tests/e2e/.cc-2.1.332/
# (all git-ignored). The pinned one keeps its old prefix, so tests/e2e/claude.ts finds it as before.
#
# Why a private prefix and not a devDependency: the package pulls a ~360 MB native binary
# that only the e2e tests need, and the version must be pinned exactly because the Agent
# tool's behaviour (name, background default) changes between releases.
#
# Why we call the platform binary directly: npm 11 may skip the wrapper's postinstall
# (which copies the native binary to bin/claude.exe), so the only path we can rely on is
# node_modules/@anthropic-ai/claude-code-<platform>/claude.
#
# Prints the binary's absolute path on stdout on success (everything else goes to stderr).
# Safe to run as root, from the repo root, with no stdin (CI).
set -euo pipefail

PINNED="2.1.328"
# The newest release CI runs the reduced permissions matrix on (tests/e2e/pgx-permissions-newest.test.ts). The one
# place it is pinned: a later session bumps it after checking the reduced matrix passes.
NEWEST="2.1.332"
case "${1:-pinned}" in
  pinned) VERSION="$PINNED" ;;
  newest) VERSION="$NEWEST" ;;
  *) VERSION="$1" ;;
esac
[[ "$VERSION" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || { printf 'install-claude-code: ERROR: not a version: %s\n' "$VERSION" >&2; exit 2; }
REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [[ "$VERSION" == "$PINNED" ]]; then PREFIX="$REPO_ROOT/tests/e2e/.cc"; else PREFIX="$REPO_ROOT/tests/e2e/.cc-$VERSION"; fi

log() { printf 'install-claude-code: %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# Does this binary print the wanted version? (`claude --version` prints e.g. "2.1.328 (Claude Code)".)
version_ok() {
  local out
  out="$("$1" --version </dev/null 2>/dev/null)" || return 1
  [[ "$out" == "$VERSION "* || "$out" == "$VERSION" ]]
}

# Find the native binary among the optional platform packages
# (claude-code-linux-x64, claude-code-linux-arm64, claude-code-darwin-arm64, -musl variants...).
# If npm left several (e.g. glibc and musl), take the first one that actually runs here.
find_binary() {
  local candidate
  for candidate in "$PREFIX"/node_modules/@anthropic-ai/claude-code-*/claude; do
    [[ -f "$candidate" ]] || continue
    # npm preserves the executable bit, but be tolerant of a tarball that lost it.
    [[ -x "$candidate" ]] || chmod +x "$candidate" 2>/dev/null || true
    if [[ -x "$candidate" ]] && version_ok "$candidate"; then
      printf '%s\n' "$candidate"
      return 0
    fi
  done
  return 1
}

if bin="$(find_binary)"; then
  log "Claude Code $VERSION already installed"
  printf '%s\n' "$bin"
  exit 0
fi

command -v npm >/dev/null 2>&1 || die "npm not found on PATH"

log "installing @anthropic-ai/claude-code@$VERSION into $PREFIX (about 360 MB)..."
mkdir -p "$PREFIX"
# A tiny package.json makes the prefix its own npm project, so npm never walks up to the
# repo's package.json/package-lock.json and never touches them.
if [[ ! -f "$PREFIX/package.json" ]]; then
  printf '{ "name": "pgx-e2e-claude-code", "private": true }\n' >"$PREFIX/package.json"
fi
# A previous install of a different version would leave a stale platform package behind.
rm -rf "$PREFIX"/node_modules/@anthropic-ai

# --include=optional: the native binary comes through an optionalDependency; make sure a
# user-level `omit=optional` config cannot drop it. The wrapper declares engines node>=22;
# on Node 20 that is only a warning, and the native binary needs no Node at all.
if ! npm install --prefix "$PREFIX" --no-save --no-audit --no-fund --no-package-lock \
      --include=optional --loglevel=warn \
      "@anthropic-ai/claude-code@$VERSION" </dev/null >&2; then
  die "npm install @anthropic-ai/claude-code@$VERSION failed (is the npm registry reachable?)"
fi

if ! bin="$(find_binary)"; then
  found="$(ls -d "$PREFIX"/node_modules/@anthropic-ai/claude-code-*/claude 2>/dev/null | tr '\n' ' ' || true)"
  die "installed, but no working native binary with version $VERSION under $PREFIX/node_modules/@anthropic-ai/claude-code-*/claude (found: ${found:-none}; platform $(uname -s)-$(uname -m))"
fi

log "installed Claude Code $VERSION"
printf '%s\n' "$bin"
