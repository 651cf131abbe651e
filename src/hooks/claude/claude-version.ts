// Which Claude Code runs the hook, and whether pgx's permission-preserving rewrite (rewrite.ts) was verified on it.
// Claude Code 2.1.328 gives every hook process AI_AGENT=claude-code_2-1-328_harness (its Bash commands get
// …_agent); no payload field carries the version.

/** The versions on which the permissions matrix (tests/e2e/pgx-permissions.test.ts) showed 0 weakened decisions. */
export const VERIFIED_CLAUDE_CODE_VERSIONS: readonly string[] = ['2.1.328'];

/** "2.1.328" from AI_AGENT, or undefined when the variable is absent or not Claude Code's. */
export function claudeCodeVersion(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const m = /^claude-code_(\d+)-(\d+)-(\d+)(?:_|$)/.exec(env.AI_AGENT ?? '');
  return m ? `${m[1]}.${m[2]}.${m[3]}` : undefined;
}

/**
 * PGX_VERIFIED_CLAUDE_CODE (comma-separated versions, or "none") replaces the list: how the permissions matrix is run
 * against a candidate version before it is added here, and how the tests reach the unverified path.
 */
export function isVerifiedClaudeCode(version: string | undefined, env: NodeJS.ProcessEnv = process.env): boolean {
  const list = env.PGX_VERIFIED_CLAUDE_CODE !== undefined ? env.PGX_VERIFIED_CLAUDE_CODE.split(',').map((v) => v.trim()) : VERIFIED_CLAUDE_CODE_VERSIONS;
  return version !== undefined && list.includes(version);
}

export function unverifiedWarning(version: string | undefined, policy: 'ask' | 'rules'): string {
  const head = `pgx: routing is verified to keep your permission rules on Claude Code ${VERIFIED_CLAUDE_CODE_VERSIONS.join(', ')}; this is ${version ?? 'an unknown version'}.`;
  return policy === 'ask'
    ? `${head} Each routed subagent command asks for approval until pgx is verified on it (or set [agent] unverified_claude_code = "rules" in .pgx.toml to trust the rewrite on this version). \`pgx agent doctor\` explains.`
    : `${head} unverified_claude_code = "rules": routed commands rely on a rewrite not verified on this version. \`pgx agent doctor\` explains.`;
}
