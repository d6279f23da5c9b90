/**
 * D1 queries on `idempotency_keys` (migrations/0001): the atomic claim of a key, the
 * completion that stores the response, lock release, expiry and settle window, and the
 * retention purge.
 * Every time is epoch milliseconds; statements bind with `?N`; `db` is the D1 database the
 * key lives in (one of the `D1_SHARDS`, worker/proxy/stages/idempotency-shards.ts).
 */

/** `in_flight`: claimed, answer not stored yet; `completed`: answer stored. */
type IdempotencyKeyState = 'in_flight' | 'completed';

/** A stored response, replayed byte-identically. */
export interface StoredResponse {
  readonly status: number;
  /** Lowercased header names to values (only the headers that matter). */
  readonly headers: Readonly<Record<string, string>>;
  /** The exact body bytes (empty for none). */
  readonly body: Uint8Array;
}

/** One idempotency key of one caller, as the domain sees it. */
export interface IdempotencyKeyRecord {
  readonly caller: string;
  readonly key: string;
  /** `METHOD path?query sha256hex(body)`, compared to detect reuse with another request. */
  readonly fingerprint: string;
  readonly state: IdempotencyKeyState;
  /** Epoch ms after which an in-flight claim is presumed dead; also the owner's fencing token. */
  readonly lockedUntil: number;
  /** The stored response; `undefined` while in flight. */
  readonly response: StoredResponse | undefined;
  readonly createdAt: number;
  /** Epoch ms from which the key is treated as absent (and purged). */
  readonly expiresAt: number;
}

/** A claim this worker holds: the key and the `locked_until` it wrote (its fencing token). */
export interface IdempotencyLock {
  readonly caller: string;
  readonly key: string;
  readonly lockedUntil: number;
  /** The database holding the claim: every later write of the claim goes there. */
  readonly shard: D1Database;
}

/** A lock as the statements on its own database need it: the key and its fencing token. */
type HeldClaim = Omit<IdempotencyLock, 'shard'>;

/** Input of {@link claimIdempotencyKey}; times in epoch milliseconds. */
export interface IdempotencyClaim extends HeldClaim {
  readonly fingerprint: string;
  readonly now: number;
  readonly expiresAt: number;
  /** Take over an in-flight claim with the same fingerprint whose lock ran out. */
  readonly takeOverStale: boolean;
}

/** What {@link claimIdempotencyKey} found: a new claim, a taken-over stale claim, or someone else's row. */
export type ClaimOutcome =
  | { readonly kind: 'claimed'; readonly lock: IdempotencyLock }
  | { readonly kind: 'taken_over'; readonly lock: IdempotencyLock }
  | { readonly kind: 'existing'; readonly record: IdempotencyKeyRecord };

interface IdempotencyKeyRow {
  caller: string;
  idempotency_key: string;
  fingerprint: string;
  state: string;
  locked_until: number;
  response_status: number | null;
  response_headers: string | null;
  response_body: ArrayBuffer | number[] | null;
  created_at: number;
  expires_at: number;
}

const WHERE_KEY = 'caller = ?1 AND idempotency_key = ?2';
const WHERE_LOCK = `${WHERE_KEY} AND state = 'in_flight' AND locked_until = ?3`;
// Takes over a stale in-flight claim of the same request: binds caller, key, now, the new
// lock and the fingerprint.
const TAKE_OVER = `UPDATE idempotency_keys SET locked_until = ?4 WHERE ${WHERE_KEY}
  AND state = 'in_flight' AND locked_until <= ?3 AND fingerprint = ?5`;

/**
 * The condition of a completed key past its retention, `now` being the parameter that
 * binds "now" (epoch ms): the only rows ever purged. An in-flight claim is kept whatever
 * its age: its request may have reached the payment service, and without the row a retry
 * would be sent again without a lookup.
 */
function purgeable(now: string): string {
  return `state = 'completed' AND expires_at <= ${now}`;
}

/**
 * Maps a row to the domain record.
 *
 * @param row - a row of `idempotency_keys` (D1 returns BLOBs as arrays of bytes).
 */
function toIdempotencyKeyRecord(row: IdempotencyKeyRow): IdempotencyKeyRecord {
  const response =
    row.state === 'completed' && row.response_status !== null
      ? {
          status: row.response_status,
          headers: JSON.parse(row.response_headers ?? '{}') as Record<string, string>,
          body: row.response_body === null ? new Uint8Array() : new Uint8Array(row.response_body),
        }
      : undefined;
  return {
    caller: row.caller,
    key: row.idempotency_key,
    fingerprint: row.fingerprint,
    state: row.state === 'completed' ? 'completed' : 'in_flight',
    lockedUntil: row.locked_until,
    response,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
  };
}

/**
 * Claims a key in one round trip (one `DB.batch()`, a transaction): drops the key if it
 * is completed and expired (an in-flight claim is never dropped: its request may have
 * reached the payment service, so a retry must go through verify-before-resend), optionally takes over a stale in-flight claim of the same request
 * (conditional UPDATE on the old lock), inserts a new claim with
 * `INSERT ... ON CONFLICT DO NOTHING` on the (caller, key) primary key, and reads the row.
 *
 * @param claim - key, fingerprint and times (epoch ms).
 * @returns `claimed` or `taken_over` with the lock now held, else the existing record.
 */
export async function claimIdempotencyKey(
  db: D1Database,
  claim: IdempotencyClaim,
): Promise<ClaimOutcome> {
  const { caller, key, now, lockedUntil } = claim;
  const statements = [
    db
      .prepare(`DELETE FROM idempotency_keys WHERE ${WHERE_KEY} AND ${purgeable('?3')}`)
      .bind(caller, key, now),
    ...(claim.takeOverStale
      ? [db.prepare(TAKE_OVER).bind(caller, key, now, lockedUntil, claim.fingerprint)]
      : []),
    db
      .prepare(
        `INSERT INTO idempotency_keys
           (caller, idempotency_key, fingerprint, state, locked_until, created_at, expires_at)
         VALUES (?1, ?2, ?3, 'in_flight', ?4, ?5, ?6)
         ON CONFLICT (caller, idempotency_key) DO NOTHING`,
      )
      .bind(caller, key, claim.fingerprint, lockedUntil, now, claim.expiresAt),
    db.prepare(`SELECT * FROM idempotency_keys WHERE ${WHERE_KEY}`).bind(caller, key),
  ];
  const results = await db.batch<IdempotencyKeyRow>(statements);
  const lock = { caller, key, lockedUntil, shard: db };
  if (claim.takeOverStale && results[1]?.meta.changes === 1) return { kind: 'taken_over', lock };
  if (results.at(-2)?.meta.changes === 1) return { kind: 'claimed', lock };
  const row = results.at(-1)?.results[0];
  // The row cannot vanish inside the transaction; a missing one is a bug.
  if (row === undefined) throw new Error('idempotency claim found no row');
  return { kind: 'existing', record: toIdempotencyKeyRecord(row) };
}

/**
 * Takes over a stale in-flight claim of the same request (same fingerprint, lock run
 * out), inserting nothing: for a key found in another shard than the one it would be
 * claimed in, which must not get a row where it is not.
 *
 * @param claim - key, fingerprint and times (epoch ms); `takeOverStale` is not read.
 * @returns the lock now held, or `undefined` when the claim is not stale (any more).
 */
export async function takeOverIdempotencyKey(
  db: D1Database,
  claim: IdempotencyClaim,
): Promise<IdempotencyLock | undefined> {
  const { caller, key, now, lockedUntil } = claim;
  const result = await db
    .prepare(TAKE_OVER)
    .bind(caller, key, now, lockedUntil, claim.fingerprint)
    .run();
  return result.meta.changes === 1 ? { caller, key, lockedUntil, shard: db } : undefined;
}

/**
 * Stores the response and marks the key completed, only while `lock` is still held.
 *
 * @returns `false` when the lock was lost (taken over after a timeout): nothing stored.
 */
export async function completeIdempotencyKey(
  db: D1Database,
  lock: HeldClaim,
  response: StoredResponse,
): Promise<boolean> {
  const result = await db
    .prepare(
      `UPDATE idempotency_keys SET state = 'completed', response_status = ?4,
         response_headers = ?5, response_body = ?6 WHERE ${WHERE_LOCK}`,
    )
    .bind(
      lock.caller,
      lock.key,
      lock.lockedUntil,
      response.status,
      JSON.stringify(response.headers),
      response.body.slice().buffer,
    )
    .run();
  return result.meta.changes === 1;
}

/**
 * Deletes a claim still held by `lock`, so the key can be used again (nothing was processed).
 *
 * @returns `false` when the lock was lost.
 */
export async function releaseIdempotencyKey(db: D1Database, lock: HeldClaim): Promise<boolean> {
  const result = await db
    .prepare(`DELETE FROM idempotency_keys WHERE ${WHERE_LOCK}`)
    .bind(lock.caller, lock.key, lock.lockedUntil)
    .run();
  return result.meta.changes === 1;
}

/**
 * Ends a held lock now, storing nothing: the claim becomes stale at once, so the next
 * request with the key goes through verify-before-resend (after a lookup that sent nothing,
 * or on a keyed route that moves no money; a money POST's ambiguous response takes
 * {@link settleIdempotencyLock} instead).
 *
 * @param now - epoch ms written as the new `locked_until`.
 * @returns `false` when the lock was lost.
 */
export async function expireIdempotencyLock(
  db: D1Database,
  lock: HeldClaim,
  now: number,
): Promise<boolean> {
  const result = await db
    .prepare(`UPDATE idempotency_keys SET locked_until = ?4 WHERE ${WHERE_LOCK}`)
    .bind(lock.caller, lock.key, lock.lockedUntil, Math.min(now, lock.lockedUntil - 1))
    .run();
  return result.meta.changes === 1;
}

/**
 * Hands a held lock back locked until `until` (the settle window after an ambiguous
 * upstream answer): no request takes the claim over before then, and this holder no
 * longer owns it (its fencing token changed), so the next request with the key goes
 * through verify-before-resend once the window is over.
 *
 * @param until - epoch ms written as the new `locked_until`; moved by 1 ms when it equals
 *   the held token, so the token always changes.
 * @returns `false` when the lock was lost.
 */
export async function settleIdempotencyLock(
  db: D1Database,
  lock: HeldClaim,
  until: number,
): Promise<boolean> {
  const result = await db
    .prepare(`UPDATE idempotency_keys SET locked_until = ?4 WHERE ${WHERE_LOCK}`)
    .bind(lock.caller, lock.key, lock.lockedUntil, until === lock.lockedUntil ? until + 1 : until)
    .run();
  return result.meta.changes === 1;
}

/**
 * Reads one key (expired or not).
 *
 * @returns the record, or `undefined` when there is no row.
 */
export async function findIdempotencyKey(
  db: D1Database,
  caller: string,
  key: string,
): Promise<IdempotencyKeyRecord | undefined> {
  const row = await db
    .prepare(`SELECT * FROM idempotency_keys WHERE ${WHERE_KEY}`)
    .bind(caller, key)
    .first<IdempotencyKeyRow>();
  return row === null ? undefined : toIdempotencyKeyRecord(row);
}

/**
 * Deletes up to `limit` completed keys whose retention ended (`expires_at <= now`),
 * oldest first. In-flight claims are never deleted, however old (see `purgeable`).
 *
 * @param now - epoch ms.
 * @param limit - most rows deleted by this call.
 * @returns how many rows were deleted.
 */
export async function purgeExpiredIdempotencyKeys(
  db: D1Database,
  now: number,
  limit: number,
): Promise<number> {
  const result = await db
    .prepare(
      `DELETE FROM idempotency_keys WHERE rowid IN (SELECT rowid FROM idempotency_keys
         WHERE ${purgeable('?1')} ORDER BY expires_at LIMIT ?2)`,
    )
    .bind(now, limit)
    .run();
  return result.meta.changes;
}
