#!/usr/bin/env bash
# Install the GitHub Copilot CLI used by the end-to-end tests. Idempotent: does nothing when that version is already there.
#
#   scripts/install-copilot.sh            the pinned version into tests/e2e/.copilot-cli/ (git-ignored)
#   scripts/install-copilot.sh 1.0.103    that version into tests/e2e/.copilot-cli-1.0.103/
#
# Why a private prefix and not a devDependency: the package pulls a ~190 MB native binary that only the e2e tests need,
# and the version is pinned exactly because the hook contract (payload casing, which ids a subagent's payload carries)
# changes between releases.
#
# The binary unpacks ~235 MB into $XDG_CACHE_HOME/copilot on its first run. The tests point XDG_CACHE_HOME at
# <prefix>/cache (tests/e2e/copilot.ts), so this script runs it once there: the extraction happens here, once per
# machine, not in a test (and not in a test's temp dir).
#
# Prints the binary's absolute path on stdout on success (everything else goes to stderr).
# Safe to run as root, from the repo root, with no stdin (CI).
set -euo pipefail

PINNED="1.0.102"
VERSION="${1:-$PINNED}"
REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [[ "$VERSION" == "$PINNED" ]]; then PREFIX="$REPO_ROOT/tests/e2e/.copilot-cli"; else PREFIX="$REPO_ROOT/tests/e2e/.copilot-cli-$VERSION"; fi
# shellcheck source=lib-install-native-cli.sh
. "$REPO_ROOT/scripts/lib-install-native-cli.sh"
# The cache the version check unpacks into, and an empty HOME: nothing lands in the caller's ~/.cache or ~/.copilot.
mkdir -p "$PREFIX/cache" "$PREFIX/home"
export XDG_CACHE_HOME="$PREFIX/cache" HOME="$PREFIX/home" COPILOT_HOME="$PREFIX/home/.copilot" COPILOT_AUTO_UPDATE=false
bin="$(install_native_cli "Copilot CLI" @github/copilot "$VERSION" "$PREFIX" "about 190 MB, and 235 MB unpacked on first run" \
  "$PREFIX/node_modules/@github/copilot-linux-x64/copilot" "$PREFIX/node_modules/@github/copilot-linuxmusl-x64/copilot" \
  "$PREFIX/node_modules/@github/copilot-linux-arm64/copilot" "$PREFIX/node_modules/@github/copilot-darwin-*/copilot")"
printf '%s\n' "$bin"
