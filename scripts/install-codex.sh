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
REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [[ "$VERSION" == "$PINNED" ]]; then PREFIX="$REPO_ROOT/tests/e2e/.codex-cli"; else PREFIX="$REPO_ROOT/tests/e2e/.codex-cli-$VERSION"; fi
# shellcheck source=lib-install-native-cli.sh
. "$REPO_ROOT/scripts/lib-install-native-cli.sh"
install_native_cli "Codex CLI" @openai/codex "$VERSION" "$PREFIX" "about 315 MB" \
  "$PREFIX/node_modules/@openai/codex-*/vendor/*/bin/codex" "$PREFIX/node_modules/@openai/codex/vendor/*/codex/codex"
