// The engine API: everything the CLI and the hooks ask of pgx's branches, and the only engine module they import.
// Each method is one piece of policy (which records a selector means: selector.ts; what a command acts on beyond
// that: command-targets.ts; what SessionEnd retires and how patiently: session-end.ts) and returns a typed result that
// `--json` prints as it is. The CLI parses flags and prints; a hook handler parses its payload, calls one method and
// shapes the hook output.
import type { Config } from '../project/config.js';
import { identityKey } from './identity.js';
import * as records from '../registry/records.js';
import type { BranchState } from '../registry/records.js';
import { ensureBranch, type EnsureOptions, type EnsureResult } from './branch-ensure.js';
import { dropBranch, forgetBranch, gc, retireBranch, type DownResult, type GcResult } from './branch-retire.js';
import { openContext, type EngineContext, type OpenOptions } from './context.js';
import { endLease, type LeaseEnd } from './exec-lease.js';
import type {
  ImportOptions,
  ImportResult,
  SourceOrigin,
  SyncOptions,
  SyncResult as SourceSyncResult,
} from './source-import.js';
import { refreshTemplate, type RefreshResult as TemplateRefreshResult } from './template.js';
import type { TemplateGcResult, TemplateInfo } from './template-admin.js';
import {
  drainPool,
  fillPool,
  poolStatus,
  retireOldMembers,
  type DrainResult,
  type FillResult,
  type PoolStatus,
} from './pool.js';
import { attachFast } from './attach.js';
import { ensureTarget, identityOf, oneRecord, resolveSelector, type Selector, type Target } from './selector.js';
import { endSession, stopSubagent, type EndSessionResult, type SubagentStopResult } from './session-end.js';
import { summarize, type BranchSummary } from './branch-summary.js';
import { adoptBranch, resetBranch, type ResetResult } from './reset.js';
import type { ForkRequest } from './fork.js';
import * as roles from './roles.js';
import type { Against } from './diff.js';
import type { DiffBounds, DiffResult } from './diff-result.js';
import type { SqlDiffResult } from './diff-sql.js';
import type { MergeOptions, MergeResult } from './merge.js';
import { handoffsFrom, type ChangeSummary, type HandoffRef } from './handoff-text.js';
export { handoffText, type HandoffRef } from './handoff-text.js';
export {
  ForkUnavailableError,
  FALLBACK_SETTING,
  missFix,
  missReason,
  templateInsteadWarning,
  type ForkMiss,
} from './fork-miss.js';
import { missTextForParent } from './fork-miss.js';
import { forkMissesOfSession } from '../registry/fork-misses.js';
import type { ScanReport } from '../mask/scan.js';
import type { ConnParams } from '../server/conn-params.js';
export type { ScanReport };
export { dropRegistry, type RegistryDropResult } from './registry-drop.js';

export type { ConnectionReuse, FreezeElsewhere } from './context.js';
export type { FrozenCopySummary, FrozenUseResult } from './freeze.js';
import type { FrozenCopySummary, FrozenUseResult } from './freeze.js';

/** What the CLI's branch commands act on (down, forget, adopt, freeze, scan): no hook runs them (scripts/build.mjs). */
const commandTargets = () => import('./command-targets.js');
export type { Against, ChangeSummary, DiffBounds, DiffResult, SqlDiffResult, MergeOptions, MergeResult };
export type { ForkRequest, ResetResult };
export type { BranchSummary, EndSessionResult, Selector, SubagentStopResult, Target };
export type {
  DownResult,
  EnsureOptions,
  EnsureResult,
  GcResult,
  LeaseEnd,
  OpenOptions,
  PoolStatus,
  FillResult,
  DrainResult,
  ImportResult,
  SourceOrigin,
  TemplateInfo,
};

export interface SyncResult extends SourceSyncResult {
  /** The template rebuilt from the new copy (null: --no-template, or the refresh failed: see template_error). */
  template: RefreshResult | null;
  template_error: string | null;
}

export interface RefreshResult extends TemplateRefreshResult {
  /** Warm-pool members of the previous template build, no longer claimable (gc drops them). */
  pool_retired: number;
}

export interface TouchResult {
  branch: string | null;
  /** The record's state (null: no branch); only an active branch is heartbeated. */
  state: BranchState | null;
  heartbeat: boolean;
}

export class Engine {
  private constructor(private readonly ctx: EngineContext) {}

  static async open(config: Config, opts: OpenOptions = {}): Promise<Engine> {
    return new Engine(await openContext(config, opts));
  }

  async close(): Promise<void> {
    if (this.ctx.giveBack) return this.ctx.giveBack(); // the broker's: kept for the next piece of work
    await this.ctx.registry.close();
  }

  /**
   * Ensure the target's branch. `agentId` without a session id (the PreToolUse rewrite carries only the agent id;
   * Claude Code normally exports CLAUDE_CODE_SESSION_ID to Bash, which fills it in) attaches to the one branch the
   * hook made for that agent in this project on this host. It never creates one without the session, and when the
   * agent id has branches in more than one session it refuses rather than guess, so a command can't land on another's
   * branch.
   */
  async ensure(t: Target, opts: EnsureOptions = {}): Promise<EnsureResult> {
    return ensureBranch(this.ctx, identityOf(this.ctx, await ensureTarget(this.ctx, t)), opts);
  }

  /** `agent exec --id`: the end of this engine's exec lease on `branch` (see exec-lease.ts); retires it if last. */
  endExecLease(branch: { name: string; identity_key: string }): Promise<LeaseEnd> {
    return endLease(this.ctx, branch);
  }

  /** Activity: moves an active branch's idle deadline (UserPromptSubmit). */
  async touch(t: Target): Promise<TouchResult> {
    const rec = await records.findByIdentity(this.ctx.registry, identityKey(identityOf(this.ctx, t)));
    if (!rec) return { branch: null, state: null, heartbeat: false };
    return { branch: rec.name, state: rec.state, heartbeat: await records.heartbeat(this.ctx.registry, rec.name) };
  }

  /** Retires what the selector matches (nothing matched: an empty list). `gcAfter`: then drop up to n expired branches. */
  async retire(sel: Selector, opts: { gcAfter?: number } = {}): Promise<DownResult[]> {
    const done: DownResult[] = [];
    for (const rec of await resolveSelector(this.ctx, sel)) done.push(await retireBranch(this.ctx, rec));
    if (opts.gcAfter && done.length) await gc(this.ctx, opts.gcAfter).catch(() => {}); // bounded, opportunistic
    return done;
  }

  /** `pgx agent down`: retires (or with `now` drops) what the selector matches; nothing matched is NOT_FOUND. */
  async down(sel: Selector, opts: { now?: boolean } = {}): Promise<DownResult[]> {
    const recs = await (await commandTargets()).downTargets(this.ctx, sel);
    const done: DownResult[] = [];
    for (const rec of recs) done.push(opts.now ? await dropBranch(this.ctx, rec) : await retireBranch(this.ctx, rec));
    return done;
  }

  /**
   * `pgx agent reset`: the one branch the selector names goes back to its parent's current state (`parent`: its
   * session's branch, or the template when it has none) or to the template, keeping its name, role and DSN.
   */
  async reset(sel: Selector, to: 'parent' | 'template' = 'parent'): Promise<ResetResult> {
    const rec = await oneRecord(this.ctx, sel, 'reset');
    return resetBranch(this.ctx, rec, to);
  }

  /** `pgx agent adopt --agent`: the subagent's session branch becomes a copy of the subagent's branch (same DSN). */
  async adopt(agentId: string): Promise<ResetResult & { agent_branch: string }> {
    const { agent, session } = await (await commandTargets()).adoptTargets(this.ctx, agentId);
    return { ...(await adoptBranch(this.ctx, session, agent)), agent_branch: agent.name };
  }

  /**
   * `pgx agent forget`: deletes the records the selector matches and nothing else: for a record whose database was
   * replaced by one pgx did not make (every command on it is refused), or whose name is wanted back. Refused for a
   * record whose database is provably pgx's (that is `down`'s).
   */
  async forget(sel: Selector): Promise<DownResult[]> {
    const recs = await (await commandTargets()).forgetTargets(this.ctx, sel);
    const done: DownResult[] = [];
    for (const rec of recs) done.push(await forgetBranch(this.ctx, rec));
    return done;
  }

  /** SessionEnd: every active branch of the session on this host retired, patiently bounded (session-end.ts). */
  endSession(sessionId: string): Promise<EndSessionResult> {
    return endSession(this.ctx, sessionId);
  }

  /** SubagentStop: the change summary, the retire, the branch kept for review if it changed anything (session-end.ts). */
  stopSubagent(t: Target): Promise<SubagentStopResult> {
    return stopSubagent(this.ctx, t);
  }

  /** The parent's handoffs for the doorbells its inbox held: the words made from the session's records (handoff-text.ts). */
  async handoffs(sessionId: string, refs: readonly HandoffRef[]): Promise<string[]> {
    if (!refs.length) return [];
    const changes = handoffsFrom(
      await records.findRecords(this.ctx.registry, {
        project: this.ctx.config.project,
        sessionId,
        includeSubagents: true,
      }),
      refs,
    );
    // A subagent that did not get the session's state (fork-miss.ts): its doorbell names its branch and the miss's time.
    const misses = await forkMissesOfSession(this.ctx.registry, this.ctx.config.project, sessionId);
    const told = new Set<string>();
    const missed = refs.flatMap((ref) => {
      const m = misses.find((x) => x.branch === ref.branch && x.at === ref.at);
      if (!m || told.has(m.identity_key)) return [];
      told.add(m.identity_key);
      return [missTextForParent(m)];
    });
    return [...missed, ...changes];
  }

  /** `pgx agent diff`: what the selected branch changed against its parent, the template or another branch. */
  async diff(sel: Selector, against: Against = 'parent', bounds?: DiffBounds): Promise<DiffResult> {
    const rec = await oneRecord(this.ctx, sel, 'diff');
    const diff = await import('./diff.js');
    return diff.diffBranch(this.ctx, rec, against, bounds ?? diff.DIFF_BOUNDS);
  }

  /**
   * `pgx agent diff --sql`: what the selected branch changed since its fork point, as one migration (diff-sql.ts,
   * which loads @supabase/pg-delta: the CLI only, a stub in the hot-path bundles).
   */
  async diffSql(sel: Selector, bounds?: DiffBounds): Promise<SqlDiffResult> {
    const rec = await oneRecord(this.ctx, sel, 'diff');
    return (await import('./diff-sql.js')).branchAsSql(this.ctx, rec, bounds);
  }

  /** `pgx agent merge`: the subagent's changes since its fork point applied to its session's branch, or refused (merge.ts). */
  async merge(agentId: string, opts: MergeOptions = {}): Promise<MergeResult> {
    return (await import('./merge.js')).mergeAgent(this.ctx, agentId, opts);
  }

  gc(limit = 1000): Promise<GcResult> {
    return gc(this.ctx, limit);
  }

  // Template housekeeping and source import are loaded when called: the hooks import this module on every command.

  /** `pgx agent gc`: expired branches, then templates nobody uses past the grace (see template-admin.ts for which). */
  async gcAll(limit: number, templateGraceMs: number): Promise<GcResult & TemplateGcResult> {
    const branches = await gc(this.ctx, limit);
    const t = await (await import('./template-admin.js')).gcTemplates(this.ctx, templateGraceMs);
    return { ...branches, templates_dropped: t.templates_dropped, errors: [...branches.errors, ...t.errors] };
  }

  /** `pgx template ls`: this project's templates, or (`all`) every pgx template on the server. */
  async templates(filter: { all?: boolean } = {}): Promise<TemplateInfo[]> {
    return (await import('./template-admin.js')).listTemplates(this.ctx, filter);
  }

  /** `pgx template drop [name]`: drops stamped templates only; returns the names dropped. */
  async dropTemplates(named?: string): Promise<string[]> {
    return (await import('./template-admin.js')).dropTemplates(this.ctx, named);
  }

  /** `pgx source import`: loads a database into this server as a source (never over an existing database). */
  async importSource(o: ImportOptions): Promise<ImportResult> {
    return (await import('./source-import.js')).importSource(this.ctx, o);
  }

  /**
   * `pgx source scan`: which columns look personal and which [mask] rule each has, read from the origin (`conn`)
   * or from [project] source on this server; nothing is copied or changed.
   */
  async scanSource(o: { conn?: ConnParams; progress: (msg: string) => void }): Promise<ScanReport> {
    const { config, gate } = this.ctx;
    const conn = (await commandTargets()).scanTarget(this.ctx, o.conn);
    return (await import('../mask/apply.js')).scanOnly(conn, config.mask, o.progress, gate);
  }

  /** What pgx remembers about where the source named `database` (default: [project] source) was copied from. */
  async sourceOrigin(database = this.ctx.config.source): Promise<SourceOrigin | undefined> {
    if (!database) return undefined;
    return (await import('./source-import.js')).sourceOrigin(this.ctx, database);
  }

  /**
   * `pgx source sync`: a fresh copy of the origin replaces [project] source (same name), the old copy is dropped,
   * and the template is rebuilt from the new copy (its old warm-pool members retired). A failed refresh leaves the
   * new source in place and says so: `pgx template refresh` finishes it.
   */
  async syncSource(o: SyncOptions & { template?: boolean }): Promise<SyncResult> {
    const r = await (await import('./source-import.js')).syncSource(this.ctx, o);
    if (o.template === false) return { ...r, template: null, template_error: null };
    try {
      return { ...r, template: await this.refreshTemplate(o.progress), template_error: null };
    } catch (err) {
      return { ...r, template: null, template_error: (err as Error).message };
    }
  }

  async refreshTemplate(progress?: (msg: string) => void): Promise<RefreshResult> {
    const r = await refreshTemplate(this.ctx, progress);
    return { ...r, pool_retired: await retireOldMembers(this.ctx) };
  }

  /** The warm pool of this project's template: members ready, target and what bounds it, filler running. */
  poolStatus(): Promise<PoolStatus> {
    return poolStatus(this.ctx);
  }

  /** Tops the warm pool up to its target; busy (and nothing done) when another filler runs. */
  fillPool(progress?: (msg: string) => void, opts?: { settleMs?: number }): Promise<FillResult> {
    return fillPool(this.ctx, progress, opts);
  }

  /** Drops every warm-pool member of this project's template. */
  drainPool(): Promise<DrainResult> {
    return drainPool(this.ctx);
  }

  /**
   * `pgx agent freeze`: the frozen copy of a branch that its forks clone, made now unless one serves (one that began
   * after `afterTicket` was drawn, or a fresh one). Command hooks start it detached for a large branch (freeze.ts).
   */
  async freeze(sel: Selector, afterTicket?: string): Promise<FrozenUseResult> {
    const rec = await (await commandTargets()).freezeTarget(this.ctx, sel, afterTicket);
    return (await import('./freeze.js')).freezeBranch(this.ctx, rec.name, afterTicket);
  }

  /** The frozen copies forks clone (freeze.ts): this project's, or (`all`) every project's on the server. */
  async frozenCopies(filter: { all?: boolean } = {}): Promise<FrozenCopySummary[]> {
    return (await import('./freeze.js')).frozenCopySummaries(
      this.ctx,
      filter.all ? undefined : this.ctx.config.project,
    );
  }

  /** This project's branches, or (`all`) every project's on the server. */
  async list(filter: { all?: boolean } = {}): Promise<BranchSummary[]> {
    const recs = await records.findRecords(this.ctx.registry, filter.all ? {} : { project: this.ctx.config.project });
    return recs.map(summarize);
  }
}

/**
 * The hot path's ensure (a subagent's PreToolUse, `agent exec`): one statement when the branch is active and
 * attachable (engine/attach.ts), the full ensure otherwise. Needs the full identity (a session id, or an exec id);
 * without it, the full ensure resolves the agent's session.
 */
export async function attachOrEnsure(
  config: Config,
  t: Target,
  opts: OpenOptions = {},
  ensureOpts: EnsureOptions = {},
): Promise<EnsureResult> {
  const t0 = performance.now();
  if (t.sessionId !== undefined || (t.execId !== undefined && t.agentId === undefined)) {
    const a = await attachFast(
      config,
      { project: config.project, host: config.host, sessionId: t.sessionId, agentId: t.agentId, execId: t.execId },
      opts,
    );
    if (a)
      return {
        branch: a.record.name,
        record: a.record,
        fresh: false,
        method: 'attach',
        elapsed_ms: Math.round(performance.now() - t0),
        conn: roles.branchConn(a.admin, a.record),
      };
  }
  return withEngine(config, (e) => e.ensure(t, ensureOpts), opts);
}

/** Opens the engine for one piece of work and closes it after, whatever happens. */
export async function withEngine<T>(
  config: Config,
  fn: (engine: Engine) => Promise<T>,
  opts: OpenOptions = {},
): Promise<T> {
  const engine = await Engine.open(config, opts);
  try {
    return await fn(engine);
  } finally {
    await engine.close();
  }
}
