// Can a Codex agent's commands reach the database at all? Under Codex's default sandbox (`-s workspace-write`) a
// command can open neither a TCP socket nor a Unix-domain one (both EPERM, measured on 0.171.0:
// docs/pgx/local-dev/decisions/203-codex-sandbox.md). Only `sandbox_workspace_write.network_access = true` lets psql
// reach a server. pgx never widens the sandbox on its own: install and doctor say what is needed.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { codexHome } from './codex.js';

export interface CodexSandbox {
  /** sandbox_workspace_write.network_access in the user's config.toml (false when unset). */
  network_access: boolean;
  config_path: string;
  text: string;
}

export function codexSandboxNote(home = codexHome()): CodexSandbox {
  const configPath = join(home, 'config.toml');
  let network = false;
  try {
    const root = parseToml(readFileSync(configPath, 'utf8')) as {
      sandbox_workspace_write?: { network_access?: unknown };
    };
    network = root.sandbox_workspace_write?.network_access === true;
  } catch {
    // no file, or unreadable: Codex's default (no network)
  }
  return {
    network_access: network,
    config_path: configPath,
    text: network
      ? `network_access = true in ${configPath}: agents' commands can reach the database server`
      : `Codex's default sandbox (workspace-write) blocks every socket, TCP and Unix alike, so no agent command ` +
        `reaches any database (with pgx or without). pgx does not widen it for you: to let agents reach the server, ` +
        `add \`[sandbox_workspace_write]\` \`network_access = true\` to ${configPath} (or run with \`-c sandbox_workspace_write.network_access=true\`, ` +
        `or a sandbox mode that allows network)`,
  };
}
