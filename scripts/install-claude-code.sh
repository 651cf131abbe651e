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
REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [[ "$VERSION" == "$PINNED" ]]; then PREFIX="$REPO_ROOT/tests/e2e/.cc"; else PREFIX="$REPO_ROOT/tests/e2e/.cc-$VERSION"; fi
# shellcheck source=lib-install-native-cli.sh
. "$REPO_ROOT/scripts/lib-install-native-cli.sh"
# The platform packages: claude-code-linux-x64, -linux-arm64, -darwin-arm64, -musl variants...
install_native_cli "Claude Code" @anthropic-ai/claude-code "$VERSION" "$PREFIX" "about 360 MB" \
  "$PREFIX/node_modules/@anthropic-ai/claude-code-*/claude"
