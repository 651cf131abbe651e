#!/usr/bin/env bash
# Runs a command as an ordinary Unix user on what looks like a machine with NO PostgreSQL program (issue 39: the machine
# the embedded server exists for, where the database runs in a container and there is no psql or pg_dump). .ci/run's
# bare-machine step (scripts/ci-bare.sh) runs the demo and the bare tests through it; a developer can too.
# Start it as root. In a private mount namespace (nothing changes outside it, nothing is left on disk):
# /usr/lib/postgresql becomes an empty tmpfs, and every PostgreSQL program in /usr/bin and /usr/local/bin (psql,
# pg_dump, pg_restore, pg_config, pg_ctlcluster, createdb, ...) is whited out by an overlay, so that a lookup says
# "command not found", not "permission denied". Then it drops to the user with a login shell and a clean environment
# (TERM, LANG, and the variables named in PASS_VARS: a URL with a password goes through the environment, never argv).
# Usage: AS_USER=someone PASS_VARS="DEV_URL npm_config_cafile" scripts/without-postgres.sh 'which psql; npm test'
set -euo pipefail
: "${AS_USER:?set AS_USER to the ordinary user to run as}"
[ "$(id -u)" = 0 ] || { echo "without-postgres: start it as root (it makes a mount namespace, then drops to $AS_USER)" >&2; exit 2; }
export AS_USER WP_ENV=""
for v in ${PASS_VARS:-}; do WP_ENV+="$(printf '%q' "$v=${!v-}") "; done
exec unshare -m --propagation private bash -c '
  set -euo pipefail
  scratch=$(mktemp -d /run/without-postgres.XXXXXX 2>/dev/null || mktemp -d)
  mount -t tmpfs -o mode=755,size=1m none "$scratch"
  for dir in /usr/bin /usr/local/bin; do
    [ -d "$dir" ] || continue
    wh="$scratch/wh$(echo "$dir" | tr / _)"; mkdir -m 755 "$wh"; n=0
    for f in "$dir"/pg_* "$dir"/psql "$dir"/pgbench "$dir"/createdb "$dir"/dropdb "$dir"/createuser "$dir"/dropuser \
             "$dir"/clusterdb "$dir"/reindexdb "$dir"/vacuumdb "$dir"/initdb "$dir"/postgres "$dir"/postmaster; do
      [ -e "$f" ] || [ -L "$f" ] || continue
      mknod "$wh/$(basename "$f")" c 0 0; n=$((n + 1))
    done
    [ "$n" = 0 ] || mount -t overlay overlay -o "lowerdir=$wh:$dir" "$dir"
  done
  umount -l "$scratch"; rmdir "$scratch" 2>/dev/null || true
  [ -d /usr/lib/postgresql ] && mount -t tmpfs -o mode=755,size=1m none /usr/lib/postgresql
  cd /
  RU=$(command -v runuser)
  eval "exec env -i TERM=dumb LANG=C.UTF-8 $WP_ENV $RU -u \"\$AS_USER\" -- bash -lc \"\$1\""
' without-postgres "$*"
