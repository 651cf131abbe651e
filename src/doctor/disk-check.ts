// The disk budget (engine/disk-budget.ts): the free space on the file system of the server's data directory, the
// reserve no copy takes it below, and what the warm pool would still use; or, for a server whose disk pgx can't see
// (a remote one), that copies there are not budgeted. Reads only.
import { bytesText, inspectDisk, inspectPool } from '../engine/inspect.js';
import { ok, warn, skipNoServer, type Check, type DoctorContext } from './types.js';

export async function diskCheck(ctx: DoctorContext): Promise<Check> {
  const s = await ctx.server();
  if (!s.ok || !ctx.config) return skipNoServer('disk', ctx);
  const config = ctx.config;
  const d = await inspectDisk(config, s.admin, s.db);
  if (!d.visible)
    return ok(
      'disk',
      `not budgeted: pgx can't see the server's file system (${d.why}), so it refuses no copy for disk there; ` +
        `watch that server's free space yourself`,
    );
  const proof =
    d.proof === 'local server'
      ? "pgx's local server"
      : d.proof === 'postmaster.pid'
        ? 'the data directory, proven by its postmaster.pid'
        : 'the data directory, found by its path';
  const where = `${d.fs.path} (${proof})`;
  const reserve = `reserve ${bytesText(d.reserve)} (${d.reserve_setting})`;
  // What the pool would still clone: its missing members, each the template's size (about nothing copy-on-write).
  const reg = await ctx.registry();
  const pool = reg ? (await inspectPool(config, s.admin, reg))?.status : undefined;
  const missing = pool && pool.template_bytes !== null ? Math.max(0, pool.target - pool.ready - pool.filling) : 0;
  const poolMore = d.cow ? 0 : missing * (pool?.template_bytes ?? 0);
  const poolUse = d.cow
    ? `~0 more for ${missing} member(s) (copy-on-write clones)`
    : `${missing} × ${bytesText(pool?.template_bytes ?? 0)} = ${bytesText(poolMore)} more`;
  const poolText =
    !pool || pool.size === 0
      ? 'the warm pool is off'
      : missing === 0
        ? 'the warm pool is full'
        : `the warm pool would use ${poolUse}, ` + `and stops at ${bytesText(2 * d.reserve)} free`;
  // statfs's free space, less what the server may still write from its buffers (disk-budget.ts: counted as used)
  const avail = d.fs.free - d.owed;
  const detail =
    `${bytesText(d.fs.free)} free of ${bytesText(d.fs.size)} on ${where} (${bytesText(Math.max(0, avail))} ` +
    `once the server has written out its ${bytesText(d.owed)} of buffers); ${reserve}; ${poolText}`;
  const fix = `free space on that file system (pgx agent gc; pgx agent pool drain), or lower [disk] reserve in ${config.file ?? '.pgx.toml'}`;
  if (avail < d.reserve)
    return warn(
      'disk',
      `${detail}: below the reserve, so every copy (a new branch not from the pool, a fork, a reset, a template ` +
        `refresh) is refused`,
      fix,
    );
  if (poolMore && avail - poolMore < 2 * d.reserve)
    return warn('disk', `${detail}: the pool will stop short of its target`, fix);
  return ok('disk', detail);
}
