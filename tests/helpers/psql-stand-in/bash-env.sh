# Sourced by bash through BASH_ENV (tests only, on a machine with no psql): a login shell's /etc/profile resets PATH
# (Codex runs its commands with `bash -lc`), so the stand-in's directory is put first again.
case ":$PATH:" in *":${BASH_SOURCE[0]%/*}:"*) ;; *) PATH="${BASH_SOURCE[0]%/*}:$PATH" ;; esac
