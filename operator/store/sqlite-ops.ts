/**
 * The repository operations on a better-sqlite3 connection, synchronous.
 * {@link SqliteStore} exposes them through the async {@link StoreOps}
 * interface. Every multi-statement operation runs in `db.transaction`, which
 * becomes a savepoint when called inside an outer transaction.
 */
import { type Atomic, atomicRunner } from "./sqlite-atomic";
import { SqliteReserves } from "./sqlite-reserves";
import type { Database, Statement } from "better-sqlite3";
import { getAddress } from "ethers";
import { WireError } from "../../sdk/errors";
import {
  type CapacityFn,
  type CollateralBalance,
  DEFAULT_PAGE_SIZE,
  DuplicateGuaranteeError,
  type GuaranteeRecord,
  type GuaranteeState,
  type IssueGuaranteeOutcome,
  type IssueGuaranteeRequest,
  type LockResult,
  MAX_PAGE_SIZE,
  type NonceConsumption,
  type Page,
  type PageRequest,
  type RefreshTokenRecord,
  type SiweNonceRecord,
  type StoredGuarantee,
  type OutboxEvent,
  type WebhookOutboxRepository,
} from "./repositories";
import type { StoreOps } from "./store";
import type { SqliteAsyncSideOps } from "./sqlite-async-ops";

/** The synchronous shape of an async interface. */
export type SyncOf<T> = {
  [K in keyof T]: T[K] extends (...args: infer A) => Promise<infer R> ? (...args: A) => R : never;
};

interface NonceRow {
  address: string;
  expires_at: number;
  used_at: number | null;
}

interface RefreshRow {
  token_hash: string;
  family_id: string;
  wallet: string;
  scopes: string;
  issued_at: number;
  expires_at: number;
  rotated_from: string | null;
  rotated_at: number | null;
  revoked_at: number | null;
}

interface CollateralRow {
  asset_address?: string;
  deposited: string;
  locked: string;
  pending_withdrawal: string;
}

/** A `guarantees` row as SQLite returns it. */
export interface GuaranteeRow {
  guarantee_id: string;
  seq: number;
  version: number;
  user_address: string;
  recipient_address: string;
  req_id: string;
  amount: string;
  asset_address: string;
  timestamp: number;
  policy: string | null;
  scheme: string;
  signature: string;
  certificate_claims: string;
  certificate_signature: string;
  state: string;
  created_at: number;
  updated_at: number;
  cycle_id: number | null;
  excluded_reason: string | null;
  validation_request_hash: string | null;
}

/** Checksumming costs a keccak256; the same few addresses (payers, recipients, assets) recur constantly. */
const CHECKSUM_MEMO_LIMIT = 10_000;
const checksummed = new Map<string, string>();

/** Keys compare as strings: normalise every address to its checksummed form first. */
function address(value: string): string {
  let result = checksummed.get(value);
  if (result === undefined) {
    result = getAddress(value.toLowerCase());
    if (checksummed.size >= CHECKSUM_MEMO_LIMIT) checksummed.clear();
    checksummed.set(value, result);
  }
  return result;
}

function nonNegative(value: bigint, what: string): bigint {
  if (value < 0n) throw new RangeError(`${what} must not be negative, got ${value}`);
  return value;
}

function positive(value: bigint, what: string): bigint {
  if (value <= 0n) throw new RangeError(`${what} must be positive, got ${value}`);
  return value;
}

/** The original operations; the asynchronous side's are in sqlite-async-ops.ts, the outbox's in sqlite-webhook-ops.ts. */
export class SqliteOps
  implements SyncOf<Omit<StoreOps, keyof SqliteAsyncSideOps | keyof WebhookOutboxRepository>>
{
  private readonly stmt: ReturnType<typeof prepareStatements>;
  /** One issuance as a unit: a savepoint inside the batch's transaction, so a failed item leaves no trace. */
  private readonly issueOne: (request: IssueGuaranteeRequest, now: number) => IssueGuaranteeOutcome;
  /**
   * Runs a body in a transaction (a savepoint when nested). Built once: `db.transaction` makes four
   * wrapper functions per call, which was per-request garbage on the issuance path.
   */
  private readonly atomic: Atomic;
  /** Read by the check-and-lock: the payer's on-chain reserves hold collateral too. */
  private readonly reserves: SqliteReserves;

  constructor(
    private readonly db: Database,
    /** Where issuance writes its webhook events (same connection, so same transaction). */
    private readonly outbox?: { insertWebhookEvent(event: OutboxEvent, now: number): number },
  ) {
    this.stmt = prepareStatements(db);
    this.atomic = atomicRunner(db);
    this.reserves = new SqliteReserves(db);
    this.issueOne = db.transaction((request: IssueGuaranteeRequest, now: number): IssueGuaranteeOutcome => {
      const { record, capacity } = request;
      const existing = this.getGuarantee(record.guaranteeId);
      if (existing) return { kind: "duplicate", existing };
      const lock = this.lockIfAvailable(record.user, record.asset, record.amount, capacity, now);
      if (!lock.locked) {
        return { kind: "insufficient_collateral", balance: lock.balance, capacity: lock.capacity };
      }
      this.insertGuarantee(record);
      for (const event of request.events ?? []) this.outbox?.insertWebhookEvent(event, now);
      return { kind: "issued", balance: lock.balance, capacity: lock.capacity };
    });
  }

  // --- SIWE nonces ---

  insertNonce(record: SiweNonceRecord): void {
    this.stmt.insertNonce.run(record.nonce, address(record.address), record.issuedAt, record.expiresAt);
  }

  consumeNonce(nonce: string, wallet: string, now: number): NonceConsumption {
    return this.atomic((): NonceConsumption => {
      const row = this.stmt.getNonce.get(nonce) as NonceRow | undefined;
      if (!row) return "unknown";
      if (row.used_at !== null) return "used";
      if (row.expires_at <= now) return "expired";
      if (row.address !== address(wallet)) return "address_mismatch";
      // The `used_at IS NULL` guard makes the spend single-use even across processes.
      const spent = this.stmt.useNonce.run(now, nonce);
      return spent.changes === 1 ? "consumed" : "used";
    });
  }

  deleteExpiredNonces(now: number): number {
    return this.stmt.deleteExpiredNonces.run(now).changes;
  }

  // --- refresh tokens ---

  insertRefreshToken(record: RefreshTokenRecord): void {
    this.stmt.insertRefreshToken.run(
      record.tokenHash,
      record.familyId,
      address(record.wallet),
      JSON.stringify(record.scopes),
      record.issuedAt,
      record.expiresAt,
      record.rotatedFrom,
      record.rotatedAt,
      record.revokedAt,
    );
  }

  getRefreshToken(tokenHash: string): RefreshTokenRecord | null {
    const row = this.stmt.getRefreshToken.get(tokenHash) as RefreshRow | undefined;
    if (!row) return null;
    return {
      tokenHash: row.token_hash,
      familyId: row.family_id,
      wallet: row.wallet,
      scopes: JSON.parse(row.scopes) as string[],
      issuedAt: row.issued_at,
      expiresAt: row.expires_at,
      rotatedFrom: row.rotated_from,
      rotatedAt: row.rotated_at,
      revokedAt: row.revoked_at,
    };
  }

  markRefreshTokenRotated(tokenHash: string, now: number): boolean {
    return this.stmt.rotateRefreshToken.run(now, tokenHash).changes === 1;
  }

  revokeRefreshTokenFamily(familyId: string, now: number): number {
    return this.stmt.revokeFamily.run(now, familyId).changes;
  }

  // --- collateral ---

  getCollateral(user: string, asset: string): CollateralBalance {
    const key = { user: address(user), asset: address(asset) };
    const row = this.stmt.getCollateral.get(key.user, key.asset) as CollateralRow | undefined;
    return {
      ...key,
      deposited: BigInt(row?.deposited ?? 0),
      locked: BigInt(row?.locked ?? 0),
      pendingWithdrawal: BigInt(row?.pending_withdrawal ?? 0),
    };
  }

  creditDeposit(user: string, asset: string, amount: bigint, now: number): CollateralBalance {
    positive(amount, "deposit amount");
    return this.atomic(() => {
      const balance = this.getCollateral(user, asset);
      const next = { ...balance, deposited: balance.deposited + amount };
      this.writeCollateral(next, now);
      return next;
    });
  }

  lockIfAvailable(
    user: string,
    asset: string,
    amount: bigint,
    capacity: CapacityFn,
    now: number,
  ): LockResult {
    positive(amount, "lock amount");
    return this.atomic((): LockResult => {
      const balance = this.getCollateral(user, asset);
      const limit = capacity(balance, this.reserves.listReservesOfChecksummed(balance.user, balance.asset));
      if (balance.locked + amount > limit) return { locked: false, balance, capacity: limit };
      const next = { ...balance, locked: balance.locked + amount };
      this.writeCollateral(next, now);
      return { locked: true, balance: next, capacity: limit };
    });
  }

  setPendingWithdrawal(user: string, asset: string, amount: bigint, now: number): CollateralBalance {
    nonNegative(amount, "pending withdrawal");
    return this.atomic(() => {
      const next = { ...this.getCollateral(user, asset), pendingWithdrawal: amount };
      this.writeCollateral(next, now);
      return next;
    });
  }

  listCollateral(user: string): CollateralBalance[] {
    const key = address(user);
    const rows = this.stmt.listCollateral.all(key) as Required<CollateralRow>[];
    return rows.map((row) => ({
      user: key,
      asset: row.asset_address,
      deposited: BigInt(row.deposited),
      locked: BigInt(row.locked),
      pendingWithdrawal: BigInt(row.pending_withdrawal),
    }));
  }

  lockedTotals(): Map<string, bigint> {
    const totals = new Map<string, bigint>();
    for (const row of this.stmt.lockedRows.all() as { asset_address: string; locked: string }[]) {
      totals.set(row.asset_address, (totals.get(row.asset_address) ?? 0n) + BigInt(row.locked));
    }
    return totals;
  }

  // --- issuance ---

  issueGuarantees(requests: readonly IssueGuaranteeRequest[], now: number): IssueGuaranteeOutcome[] {
    return this.atomic(() =>
      requests.map((request): IssueGuaranteeOutcome => {
        try {
          return this.issueOne(request, now);
        } catch (error) {
          return { kind: "failed", error };
        }
      }),
    );
  }

  private writeCollateral(balance: CollateralBalance, now: number): void {
    this.stmt.upsertCollateral.run(
      balance.user,
      balance.asset,
      nonNegative(balance.deposited, "deposited").toString(),
      nonNegative(balance.locked, "locked").toString(),
      nonNegative(balance.pendingWithdrawal, "pending_withdrawal").toString(),
      now,
    );
  }

  // --- guarantees ---

  insertGuarantee(record: GuaranteeRecord): void {
    try {
      this.stmt.insertGuarantee.run(
        record.guaranteeId.toLowerCase(),
        record.version,
        address(record.user),
        address(record.recipient),
        nonNegative(record.reqId, "req_id").toString(),
        positive(record.amount, "amount").toString(),
        address(record.asset),
        record.timestamp,
        record.policy === null ? null : JSON.stringify(record.policy),
        record.scheme,
        record.signature,
        record.certificateClaims,
        record.certificateSignature,
        record.state,
        record.createdAt,
        record.createdAt,
      );
    } catch (error) {
      if ((error as { code?: string }).code === "SQLITE_CONSTRAINT_PRIMARYKEY") {
        throw new DuplicateGuaranteeError(record.guaranteeId.toLowerCase());
      }
      throw error;
    }
  }

  getGuarantee(guaranteeId: string): StoredGuarantee | null {
    const row = this.stmt.getGuarantee.get(guaranteeId.toLowerCase()) as GuaranteeRow | undefined;
    return row ? guaranteeFromRow(row) : null;
  }

  listGuaranteesByRecipient(recipient: string, page: PageRequest = {}): Page<StoredGuarantee> {
    const limit = pageSize(page.limit);
    const after = page.cursor === undefined || page.cursor === null ? 0 : decodeCursor(page.cursor);
    // One extra row tells whether another page exists.
    const rows = this.stmt.listByRecipient.all(address(recipient), after, limit + 1) as GuaranteeRow[];
    const items = rows.slice(0, limit);
    const last = items.at(-1);
    return {
      items: items.map(guaranteeFromRow),
      nextCursor: rows.length > limit && last ? encodeCursor(last.seq) : null,
    };
  }
}

function prepareStatements(db: Database) {
  const prepare = (sql: string): Statement => db.prepare(sql);
  return {
    insertNonce: prepare(
      "INSERT INTO siwe_nonces (nonce, address, issued_at, expires_at) VALUES (?, ?, ?, ?)",
    ),
    getNonce: prepare("SELECT address, expires_at, used_at FROM siwe_nonces WHERE nonce = ?"),
    useNonce: prepare("UPDATE siwe_nonces SET used_at = ? WHERE nonce = ? AND used_at IS NULL"),
    deleteExpiredNonces: prepare("DELETE FROM siwe_nonces WHERE expires_at < ?"),
    insertRefreshToken: prepare(
      `INSERT INTO refresh_tokens
         (token_hash, family_id, wallet, scopes, issued_at, expires_at, rotated_from, rotated_at, revoked_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    getRefreshToken: prepare("SELECT * FROM refresh_tokens WHERE token_hash = ?"),
    rotateRefreshToken: prepare(
      "UPDATE refresh_tokens SET rotated_at = ? WHERE token_hash = ? AND rotated_at IS NULL AND revoked_at IS NULL",
    ),
    revokeFamily: prepare(
      "UPDATE refresh_tokens SET revoked_at = ? WHERE family_id = ? AND revoked_at IS NULL",
    ),
    getCollateral: prepare(
      "SELECT deposited, locked, pending_withdrawal FROM collateral WHERE user_address = ? AND asset_address = ?",
    ),
    upsertCollateral: prepare(
      `INSERT INTO collateral (user_address, asset_address, deposited, locked, pending_withdrawal, updated_at)
       VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (user_address, asset_address) DO UPDATE SET
         deposited = excluded.deposited, locked = excluded.locked,
         pending_withdrawal = excluded.pending_withdrawal, updated_at = excluded.updated_at`,
    ),
    insertGuarantee: prepare(
      `INSERT INTO guarantees
         (guarantee_id, seq, version, user_address, recipient_address, req_id, amount, asset_address, timestamp,
          policy, scheme, signature, certificate_claims, certificate_signature, state, created_at, updated_at)
       VALUES (?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM guarantees), ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    listCollateral: prepare(
      `SELECT asset_address, deposited, locked, pending_withdrawal FROM collateral
       WHERE user_address = ? ORDER BY asset_address`,
    ),
    lockedRows: prepare("SELECT asset_address, locked FROM collateral WHERE locked != '0'"),
    getGuarantee: prepare("SELECT * FROM guarantees WHERE guarantee_id = ?"),
    listByRecipient: prepare(
      "SELECT * FROM guarantees WHERE recipient_address = ? AND seq > ? ORDER BY seq LIMIT ?",
    ),
  };
}

export function guaranteeFromRow(row: GuaranteeRow): StoredGuarantee {
  return {
    guaranteeId: row.guarantee_id,
    version: row.version as 1 | 2,
    user: row.user_address,
    recipient: row.recipient_address,
    reqId: BigInt(row.req_id),
    amount: BigInt(row.amount),
    asset: row.asset_address,
    timestamp: row.timestamp,
    policy: row.policy === null ? null : (JSON.parse(row.policy) as Record<string, unknown>),
    scheme: row.scheme as GuaranteeRecord["scheme"],
    signature: row.signature,
    certificateClaims: row.certificate_claims,
    certificateSignature: row.certificate_signature,
    state: row.state as GuaranteeState,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    cycleId: row.cycle_id ?? null,
    excludedReason: row.excluded_reason ?? null,
  };
}

function pageSize(limit: number | undefined): number {
  if (limit === undefined) return DEFAULT_PAGE_SIZE;
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_PAGE_SIZE) {
    throw new WireError("limit", `must be an integer from 1 to ${MAX_PAGE_SIZE}`);
  }
  return limit;
}

// Cursors are opaque to clients; today they carry the insertion sequence number.
const CURSOR_PREFIX = "g";

function encodeCursor(seq: number): string {
  return Buffer.from(`${CURSOR_PREFIX}${seq}`, "utf8").toString("base64url");
}

function decodeCursor(cursor: string): number {
  const text = Buffer.from(cursor, "base64url").toString("utf8");
  const match = /^g([1-9][0-9]{0,15})$/.exec(text);
  if (!match || Buffer.from(text, "utf8").toString("base64url") !== cursor) {
    throw new WireError("cursor", "is not a cursor returned by this API");
  }
  return Number(match[1]);
}
