// A frozen copy of a large session branch made off the hook's process (engine/freeze.ts): a command hook's process
// exits at its deadline, taking an unfinished pg_dump | psql with it, and every retry would be cut off the same way.
// A detached `pgx agent freeze` outlives the hook; the hook waits for its copy within its time, and the next ensure
// (before the subagent's next Bash command) clones it once ready. No password in its argv: the environment carries
// the server's settings, as for the pool filler.
import type { ChildProcess } from 'node:child_process';
import type { Config } from '../../project/config.js';
import type { FreezeElsewhere } from '../../engine/api.js';
import { createRequire } from 'node:module';

const lazy = createRequire(import.meta.url);

export function freezeElsewhere(config: Config): FreezeElsewhere {
  return (parent, ticket) => {
    const { spawn } = lazy('node:child_process') as typeof import('node:child_process');
    let child: ChildProcess;
    try {
      child = spawn(process.execPath, [process.argv[1]!, 'agent', 'freeze', '--branch', parent, '--after-ticket', ticket, '--cwd', config.projectDir, '--json'], { detached: true, stdio: 'ignore', env: process.env });
    } catch {
      return undefined;
    }
    const ended = new Promise<number | null>((res) => {
      child.on('exit', (code) => res(code));
      child.on('error', () => res(null));
    });
    child.unref();
    return { ended };
  };
}
