/**
 * The idempotency keys of the signing proxy in Durable Objects (one of `KEY_BUCKETS`,
 * ./buckets.ts): claim, stored answer, lock release, expiry and settle window, and the
 * purge by alarm. Times are epoch milliseconds. Each method's SQL runs before it awaits
 * anything, and an object runs one call at a time, so each is atomic (docs/architecture.md,
 * "Idempotency keys in Durable Objects").
 */
import { DurableObject } from 'cloudflare:workers';

/** Most rows one purge statement deletes, and most statements one alarm runs. */
const PURGE_BATCH_ROWS = 1_000;
const PURGE_MAX_STATEMENTS = 20;
/**
 * The least time between two purges of one object, in milliseconds, so a busy object does
 * not wake (and write its alarm) once a key; an expired key is already absent to a claim.
 */
const SWEEP_INTERVAL_MS = 3_600_000;
/** When a purge that did not finish continues, in milliseconds. */
const SWEEP_CONTINUE_MS = 1_000;

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

/** A claim held: the key and the `locked_until` written (its fencing token). */
export interface HeldClaim {
  readonly caller: string;
  readonly key: string;
  readonly lockedUntil: number;
}

/** Input of {@link IdempotencyKeys.claim}; times in epoch milliseconds. */
export interface IdempotencyClaim extends HeldClaim {
  readonly fingerprint: string;
  readonly now: number;
  readonly expiresAt: number;
  /** Take over an in-flight claim with the same fingerprint whose lock ran out. */
  readonly takeOverStale: boolean;
}

/** What a claim found: a new claim, a taken-over stale claim, or someone else's row. */
export type ClaimOutcome =
  | { readonly kind: 'claimed' }
  | { readonly kind: 'taken_over' }
  | { readonly kind: 'existing'; readonly record: IdempotencyKeyRecord };

interface IdempotencyKeyRow extends Record<string, SqlStorageValue> {
  caller: string;
  idempotency_key: string;
  fingerprint: string;
  state: string;
  locked_until: number;
  response_status: number | null;
  response_headers: string | null;
  response_body: ArrayBuffer | null;
  created_at: number;
  expires_at: number;
}

// WITHOUT ROWID and no index on expires_at: each write is one row, no index entry; the
// alarm scans instead (rows read cost a thousandth of rows written).
const SCHEMA = `CREATE TABLE IF NOT EXISTS idempotency_keys (
  caller TEXT NOT NULL,
  idempotency_key TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  state TEXT NOT NULL,
  locked_until INTEGER NOT NULL,
  response_status INTEGER,
  response_headers TEXT,
  response_body BLOB,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  PRIMARY KEY (caller, idempotency_key)
) WITHOUT ROWID`;

const WHERE_KEY = 'caller = ? AND idempotency_key = ?';
const WHERE_LOCK = `${WHERE_KEY} AND state = 'in_flight' AND locked_until = ?`;
// Only completed keys are purged: an in-flight claim's request may have reached the
// payment service, and a retry must find it to look the outcome up.
const PURGEABLE = `state = 'completed' AND expires_at <= ?`;

function toRecord(row: IdempotencyKeyRow): IdempotencyKeyRecord {
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
 * One bucket of idempotency keys (wrangler.toml `IDEMPOTENCY_KEYS`, one object per
 * `keyBucketName`): the claim, its fencing-token writes and the purge, each a method
 * that runs atomically. Writes per key: the claim (1 row), the stored response (1 row),
 * the purge (1 row), and a lock moved by a settle window or a take-over (1 row each, only
 * when something failed); the alarm is set once per bucket and retention period.
 */
export class IdempotencyKeys extends DurableObject<Env> {
  readonly #sql: SqlStorage;
  /** The alarm as last read or set (`null`: none); `undefined` until first read. */
  #alarmAt: number | null | undefined;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#sql = ctx.storage.sql;
    this.#sql.exec(SCHEMA);
  }

  /**
   * Claims a key: drops it when completed and expired (an in-flight claim is never dropped:
   * its request may have reached the payment service, so a retry must go through
   * verify-before-resend), optionally takes over a stale in-flight claim of the same
   * request, inserts a new claim when there is no row, else reads the row.
   *
   * @param claim - key, fingerprint and times (epoch ms).
   * @returns `claimed` or `taken_over` (the lock `claim.lockedUntil` is now held), else the
   *   existing record.
   */
  async claim(claim: IdempotencyClaim): Promise<ClaimOutcome> {
    const { caller, key, now, lockedUntil } = claim;
    const row = this.#find(caller, key);
    if (row === undefined || (row.state === 'completed' && row.expires_at <= now)) {
      this.#sql.exec(
        `INSERT OR REPLACE INTO idempotency_keys
           (caller, idempotency_key, fingerprint, state, locked_until, created_at, expires_at)
         VALUES (?, ?, ?, 'in_flight', ?, ?, ?)`,
        caller,
        key,
        claim.fingerprint,
        lockedUntil,
        now,
        claim.expiresAt,
      );
      await this.#sweepBy(claim.expiresAt);
      return { kind: 'claimed' };
    }
    const stale = row.state === 'in_flight' && row.locked_until <= now;
    if (claim.takeOverStale && stale && row.fingerprint === claim.fingerprint) {
      this.#sql.exec(
        `UPDATE idempotency_keys SET locked_until = ? WHERE ${WHERE_KEY}`,
        lockedUntil,
        caller,
        key,
      );
      return { kind: 'taken_over' };
    }
    return { kind: 'existing', record: toRecord(row) };
  }

  /**
   * Stores the response and marks the key completed, only while `lock` is still held.
   *
   * @returns `false` when the lock was lost (taken over after a timeout): nothing stored.
   */
  async complete(lock: HeldClaim, response: StoredResponse): Promise<boolean> {
    const [row] = this.#sql
      .exec<{ expires_at: number }>(
        `UPDATE idempotency_keys SET state = 'completed', response_status = ?,
           response_headers = ?, response_body = ? WHERE ${WHERE_LOCK} RETURNING expires_at`,
        response.status,
        JSON.stringify(response.headers),
        response.body.slice().buffer,
        lock.caller,
        lock.key,
        lock.lockedUntil,
      )
      .toArray();
    if (row === undefined) return false;
    await this.#sweepBy(row.expires_at);
    return true;
  }

  /**
   * Deletes a claim still held by `lock`, so the key can be used again (nothing was processed).
   *
   * @returns `false` when the lock was lost.
   */
  release(lock: HeldClaim): boolean {
    return this.#write(
      `DELETE FROM idempotency_keys WHERE ${WHERE_LOCK}`,
      lock.caller,
      lock.key,
      lock.lockedUntil,
    );
  }

  /**
   * Ends a held lock now, storing nothing: the claim becomes stale at once, so the next
   * request with the key goes through verify-before-resend.
   *
   * @param now - epoch ms written as the new `locked_until` (kept below the held token).
   * @returns `false` when the lock was lost.
   */
  expireLock(lock: HeldClaim, now: number): boolean {
    return this.#moveLock(lock, Math.min(now, lock.lockedUntil - 1));
  }

  /**
   * Hands a held lock back locked until `until` (the settle window after an ambiguous
   * upstream answer): no request takes the claim over before then, and this holder no
   * longer owns it (its fencing token changed).
   *
   * @param until - epoch ms written as the new `locked_until`; moved by 1 ms when it equals
   *   the held token, so the token always changes.
   * @returns `false` when the lock was lost.
   */
  settleLock(lock: HeldClaim, until: number): boolean {
    return this.#moveLock(lock, until === lock.lockedUntil ? until + 1 : until);
  }

  /**
   * Reads one key (expired or not), for the operator and the tests.
   *
   * @returns the record, or `undefined` when there is no row.
   */
  find(caller: string, key: string): IdempotencyKeyRecord | undefined {
    const row = this.#find(caller, key);
    return row === undefined ? undefined : toRecord(row);
  }

  /**
   * Deletes completed keys past their retention, a bounded number of statements per run,
   * and sets the next run at the earliest expiry left, but no sooner than
   * {@link SWEEP_INTERVAL_MS} (in a second when a run did not finish).
   * In-flight claims are never deleted, however old.
   */
  override async alarm(): Promise<void> {
    const now = Date.now();
    this.#alarmAt = null;
    let finished = false;
    for (let statement = 0; statement < PURGE_MAX_STATEMENTS && !finished; statement++) {
      const deleted = this.#sql.exec(
        `DELETE FROM idempotency_keys WHERE (caller, idempotency_key) IN
           (SELECT caller, idempotency_key FROM idempotency_keys WHERE ${PURGEABLE} LIMIT ?)`,
        now,
        PURGE_BATCH_ROWS,
      ).rowsWritten;
      finished = deleted < PURGE_BATCH_ROWS;
    }
    if (!finished) {
      await this.#sweepBy(now + SWEEP_CONTINUE_MS);
      return;
    }
    const next = this.#sql
      .exec<{ at: number | null }>(
        `SELECT min(expires_at) AS at FROM idempotency_keys WHERE state = 'completed'`,
      )
      .one().at;
    if (next !== null) await this.#sweepBy(Math.max(next, now + SWEEP_INTERVAL_MS));
  }

  #find(caller: string, key: string): IdempotencyKeyRow | undefined {
    return this.#sql
      .exec<IdempotencyKeyRow>(`SELECT * FROM idempotency_keys WHERE ${WHERE_KEY}`, caller, key)
      .toArray()[0];
  }

  #moveLock(lock: HeldClaim, lockedUntil: number): boolean {
    return this.#write(
      `UPDATE idempotency_keys SET locked_until = ? WHERE ${WHERE_LOCK}`,
      lockedUntil,
      lock.caller,
      lock.key,
      lock.lockedUntil,
    );
  }

  #write(query: string, ...bindings: SqlStorageValue[]): boolean {
    return this.#sql.exec(query, ...bindings).rowsWritten > 0;
  }

  // The purge runs by `at`: the alarm is written only when there is none or a later one.
  async #sweepBy(at: number): Promise<void> {
    if (this.#alarmAt === undefined) this.#alarmAt = await this.ctx.storage.getAlarm();
    if (this.#alarmAt !== null && this.#alarmAt <= at) return;
    this.#alarmAt = at;
    await this.ctx.storage.setAlarm(at);
  }
}
