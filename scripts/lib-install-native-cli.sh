# Sourced by scripts/install-claude-code.sh, scripts/install-codex.sh and scripts/install-copilot.sh: the one way the e2e tests' agent CLIs are
# installed. Both packages ship a large native binary in an optional platform package, and both are pinned exactly,
# so the steps are the same: find a binary of the wanted version, else npm-install the package into a private prefix
# (its own tiny npm project, so npm never touches the repo's package.json or lock) and find it again.
#
#   install_native_cli <label> <package> <version> <prefix> <size note> <binary glob>...
#
# Prints the binary's absolute path on stdout on success (everything else goes to stderr). Safe as root, no stdin.

# Does this binary print the wanted version? Claude Code prints "2.1.328 (Claude Code)", Codex "codex-cli 0.171.0",
# Copilot "GitHub Copilot CLI 1.0.102." (a full stop after it): the version as a whole word either way.
native_cli_version_ok() {
  local out
  out="$("$1" --version </dev/null 2>/dev/null)" || return 1
  [[ " $out " == *" $2 "* || " $out " == *" $2."[[:space:]]* ]]
}

# The first binary among the platform packages (glibc and musl may both be there) that runs here with the version.
native_cli_find() {
  local version="$1" candidate
  shift
  for candidate in "$@"; do
    [[ -f "$candidate" ]] || continue
    # npm preserves the executable bit, but be tolerant of a tarball that lost it.
    [[ -x "$candidate" ]] || chmod +x "$candidate" 2>/dev/null || true
    if [[ -x "$candidate" ]] && native_cli_version_ok "$candidate" "$version"; then
      printf '%s\n' "$candidate"
      return 0
    fi
  done
  return 1
}

install_native_cli() {
  local label="$1" package="$2" version="$3" prefix="$4" size="$5" bin
  shift 5
  local log_tag
  log_tag="install-$(printf '%s' "$label" | tr 'A-Z ' 'a-z-')"
  [[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || { printf '%s: ERROR: not a version: %s\n' "$log_tag" "$version" >&2; return 2; }
  # The globs were expanded by the caller before the prefix existed: expand them again after the install.
  local -a globs=("$@")
  expand() { local g; for g in "${globs[@]}"; do compgen -G "$g" || true; done; }

  if bin="$(native_cli_find "$version" $(expand))"; then
    printf '%s: %s %s already installed\n' "$log_tag" "$label" "$version" >&2
    printf '%s\n' "$bin"
    return 0
  fi
  command -v npm >/dev/null 2>&1 || { printf '%s: ERROR: npm not found on PATH\n' "$log_tag" >&2; return 1; }

  printf '%s: installing %s@%s into %s (%s)...\n' "$log_tag" "$package" "$version" "$prefix" "$size" >&2
  mkdir -p "$prefix"
  [[ -f "$prefix/package.json" ]] || printf '{ "name": "pgx-e2e-%s", "private": true }\n' "${package##*/}" >"$prefix/package.json"
  # A previous install of a different version would leave a stale platform package behind.
  rm -rf "$prefix/node_modules/${package%%/*}"
  # --include=optional: the native binary comes through an optionalDependency; a user-level omit=optional must not
  # drop it. (Claude Code's wrapper declares engines node>=22; on Node 20 that is only a warning, and the native
  # binary needs no Node at all.)
  if ! npm install --prefix "$prefix" --no-save --no-audit --no-fund --no-package-lock \
        --include=optional --loglevel=warn "$package@$version" </dev/null >&2; then
    printf '%s: ERROR: npm install %s@%s failed (is the npm registry reachable?)\n' "$log_tag" "$package" "$version" >&2
    return 1
  fi
  if ! bin="$(native_cli_find "$version" $(expand))"; then
    printf '%s: ERROR: installed, but no working native binary with version %s matching %s (found: %s; platform %s)\n' \
      "$log_tag" "$version" "${globs[*]}" "$(expand | tr '\n' ' ')" "$(uname -s)-$(uname -m)" >&2
    return 1
  fi
  printf '%s: installed %s %s\n' "$log_tag" "$label" "$version" >&2
  printf '%s\n' "$bin"
}
