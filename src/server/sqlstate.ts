// The SQLSTATEs pgx reacts to, by name, and reading one off a driver error. Its own module, importing nothing: the
// connection module (db.ts) and the catalog (catalog.ts, which imports db.ts) both need them.

/** The SQLSTATEs pgx reacts to (PostgreSQL, Appendix A). */
export const SQLSTATE = {
  UNIQUE_VIOLATION: '23505',
  INVALID_AUTHORIZATION: '28000',
  INVALID_PASSWORD: '28P01',
  INVALID_CATALOG_NAME: '3D000',
  INSUFFICIENT_PRIVILEGE: '42501',
  DUPLICATE_DATABASE: '42P04',
  DUPLICATE_OBJECT: '42710',
  UNDEFINED_TABLE: '42P01',
  UNDEFINED_COLUMN: '42703',
  DEPENDENT_OBJECTS_STILL_EXIST: '2BP01',
  OBJECT_IN_USE: '55006',
  /** lock_timeout expired (an advisory lock waited for with a bound: registry/locks.ts). */
  LOCK_NOT_AVAILABLE: '55P03',
  ADMIN_SHUTDOWN: '57P01',
  CRASH_SHUTDOWN: '57P02',
  CANNOT_CONNECT_NOW: '57P03',
} as const;

/** Class 08: connection exceptions (PostgreSQL, Appendix A). */
const CONNECTION_EXCEPTION_CLASS = '08';

/**
 * The server went away under an open connection: stopped, restarted, crashed, or an administrator ended the session.
 * node-postgres then says "Connection terminated unexpectedly" once, and "Client has encountered a connection error
 * and is not queryable" for every later query on that client: neither carries a SQLSTATE.
 */
export function isConnectionLost(e: unknown): boolean {
  const code = sqlstateOf(e);
  if (
    code &&
    ([SQLSTATE.ADMIN_SHUTDOWN, SQLSTATE.CRASH_SHUTDOWN, SQLSTATE.CANNOT_CONNECT_NOW] as string[]).includes(code)
  )
    return true;
  if (code?.startsWith(CONNECTION_EXCEPTION_CLASS)) return true;
  const message = e instanceof Error ? e.message : String(e);
  return /is not queryable|Connection terminated|server closed the connection|ECONNRESET|EPIPE/i.test(message);
}

/** The SQLSTATE of a driver error (or of the error it wraps), if any. */
export function sqlstateOf(e: unknown): string | undefined {
  const err = e as { code?: unknown; cause?: { code?: unknown } } | null;
  if (typeof err?.code === 'string' && /^[0-9A-Z]{5}$/.test(err.code)) return err.code;
  if (typeof err?.cause?.code === 'string') return err.cause.code;
  return undefined;
}
