// "No password in any process's argv": scans every /proc/<pid>/cmdline of the machine, over and over, while a test runs
// (argv is readable by every user; a password there is a leak, however short-lived the process). Linux only: elsewhere
// the scan finds nothing to read and says so in `scanned`.
import { readdirSync, readFileSync } from 'node:fs';

export interface ArgvScan {
  /** Stops scanning; the pids and command lines (the secret masked) that held one of the secrets. */
  stop(): Promise<string[]>;
  /** How many command lines were read. */
  scanned(): number;
}

export function passwordsInArgv(secrets: string[], everyMs = 50): ArgvScan {
  const wanted = secrets.filter((s) => s.length >= 4);
  const found = new Set<string>();
  let scanned = 0;
  const once = () => {
    let pids: string[];
    try {
      pids = readdirSync('/proc').filter((e) => /^\d+$/.test(e));
    } catch {
      return;
    }
    for (const pid of pids) {
      let cmd: string;
      try {
        cmd = readFileSync(`/proc/${pid}/cmdline`, 'latin1');
      } catch {
        continue;
      }
      scanned++;
      for (const s of wanted)
        if (cmd.includes(s) || cmd.includes(encodeURIComponent(s)))
          found.add(`${pid}: ${cmd.split('\0').join(' ').replaceAll(s, '***').slice(0, 300)}`);
    }
  };
  once();
  const timer = setInterval(once, everyMs);
  return {
    async stop() {
      once();
      clearInterval(timer);
      return [...found];
    },
    scanned: () => scanned,
  };
}
