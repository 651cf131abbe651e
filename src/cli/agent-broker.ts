// pgx agent broker status | start | stop (and the hidden `serve`, what start and the hooks spawn): the resident
// process that hooks and routed commands hand their work to (src/broker/). The work it runs for them is the entries'
// (src/entries/broker-work.ts), handed in by the CLI's entry: a command never reaches up for it.
import type { Command } from 'commander';
import { askBroker, brokerAddress, startBroker } from '../broker/client.js';
import { brokerDisabled, socketDir, socketDirFixHint, socketDirProblem } from '../broker/protocol.js';
import { findBrokers, stopAllBrokers, type FoundBroker } from '../broker/inventory.js';
import { serveBroker, type BrokerWork } from '../broker/server.js';
import { launcherPath } from '../hooks/claude/launcher.js';
import { PgxError } from '../lib/errors.js';
import { relativeTime } from '../lib/output.js';
import { action, withCommon, type CommonOpts } from './common.js';

/** `pgx agent broker stop`, also run by `pgx local down --purge`: every broker of this user, asked to exit. */
export const stopBrokers = stopAllBrokers;

/** A socket directory that exists and is not private (decision 443): said with an exit code, never passed over. */
function notPrivate(p: { dir: string; owner: number | undefined }): PgxError {
  const others = p.owner !== undefined && p.owner !== process.getuid?.();
  return new PgxError(
    'BROKER_UNAVAILABLE',
    `${p.dir}, the broker's socket directory, is not a private directory of yours ` +
      `(${others ? `owned by uid ${p.owner}` : 'a link, or open to group/others'}): ` +
      `pgx sends nothing there, and every hook works in its own process.`,
    others ? socketDirFixHint(p.owner) : `chmod 700 ${p.dir} if it is a directory of yours; remove it if it is a link.`,
  );
}

function describe(b: FoundBroker): string {
  return (
    `broker ${b.pid}${b.this_environment ? ' (this launcher)' : ''}: ${b.requests} request(s), ${b.pooled_connections} ` +
    `of at most ${b.pool_limit} server connection(s) kept (${b.pooled_servers} server(s)), ${Math.round(b.rss_bytes / 1048576)} ` +
    `MB resident, started ${relativeTime(b.started_at)}, exits after ${Math.round(b.idle_exit_ms / 1000)} ` +
    `s idle\n  socket ${b.socket}`
  );
}

/** Registered by cli/commands.ts under `pgx agent`. */
export const under = 'agent';

export function register(agent: Command, wiring: { brokerWork: BrokerWork }): void {
  const broker = agent
    .command('broker')
    .description(
      'the resident process hooks and routed commands hand their work to (fewer, lighter processes per command)',
    );

  withCommon(
    broker.command('status').description("this user's brokers: pid, requests served, kept connections"),
  ).action(
    action<CommonOpts>(async (_opts, out) => {
      const problem = socketDirProblem();
      if (problem) throw notPrivate(problem);
      const own = brokerAddress(process.env, launcherPath());
      const list = await findBrokers(own);
      const disabled = brokerDisabled();
      out.result(
        {
          enabled: !disabled,
          socket_dir: socketDir(process.env) ?? null,
          socket: own?.path ?? null,
          running: list.some((b) => b.this_environment),
          brokers: list,
        },
        () => {
          if (disabled)
            return 'broker: off (PGX_BROKER=0): every hook and routed command does its work in its own process';
          if (!own)
            return (
              'broker: unavailable here (no private socket directory: $XDG_RUNTIME_DIR/pgx, $TMPDIR/pgx-<uid>, ~/.pgx/run ' +
              'or /tmp/pgx-<uid>, mode 0700)'
            );
          return list.length ? list.map(describe).join('\n') : 'broker: none running (the next hook starts one)';
        },
      );
    }),
  );

  withCommon(
    broker.command('start').description("start this environment's broker now (hooks start it when they find none)"),
  ).action(
    action<CommonOpts>(async (_opts, out) => {
      const launcher = launcherPath();
      const addr = brokerAddress(process.env, launcher, true);
      const problem = socketDirProblem();
      if (problem) throw notPrivate(problem);
      if (!addr)
        throw new PgxError(
          'BROKER_UNAVAILABLE',
          brokerDisabled() ? 'The broker is off (PGX_BROKER=0).' : 'No private socket directory for the broker.',
          'Unset PGX_BROKER, or make $XDG_RUNTIME_DIR/pgx (or <tmp>/pgx-<uid>) a 0700 directory of yours.',
        );
      let asked = await askBroker(addr, { op: 'status' }, 2000);
      if (!asked.answer) {
        await startBroker(addr, launcher);
        for (let i = 0; i < 50 && !asked.answer; i++) {
          await new Promise((r) => setTimeout(r, 100));
          asked = await askBroker(addr, { op: 'status' }, 2000);
        }
      }
      const st = asked.answer && 'status' in asked.answer ? asked.answer.status : undefined;
      if (!st)
        throw new PgxError(
          'BROKER_UNAVAILABLE',
          'The broker did not start within 5 s.',
          'Run `pgx agent broker serve` in a terminal to see why.',
        );
      out.result({ ...st, socket: addr.path }, () => `broker ${st.pid} running (socket ${addr.path})`);
    }),
  );

  withCommon(
    broker
      .command('stop')
      .description("stop this user's brokers (hooks then work in their own processes until one starts again)"),
  ).action(
    action<CommonOpts>(async (_opts, out) => {
      const list = await stopBrokers();
      out.result({ stopped: list.map((b) => b.pid) }, () =>
        list.length
          ? `stopped ${list.length} broker(s): ${list.map((b) => b.pid).join(', ')}`
          : 'no broker was running',
      );
    }),
  );

  broker
    .command('serve', { hidden: true })
    .description('run the broker in this process (what `start` and the hooks spawn, detached)')
    .action(async () => {
      const handle = await serveBroker({
        launcher: launcherPath(),
        work: wiring.brokerWork,
        onClose: () => process.exit(0),
      });
      if (handle === 'running')
        return void process.stderr.write('pgx: a broker for this environment is running already\n');
      if (handle === 'unavailable')
        return void process.stderr.write('pgx: no broker here: PGX_BROKER is off, or no private socket directory\n');
      process.stderr.write(`pgx: broker ${process.pid} serving on ${handle.address.path}\n`);
      for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(sig, () => void handle.close());
    });
}
