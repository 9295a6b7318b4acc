/** {@link GuaranteeRepository} on a better-sqlite3 connection: records, transitions, clearing columns, V2 responses. */
import type { Database, Statement } from "better-sqlite3";
import { type Atomic, atomicRunner } from "../sqlite-atomic";
import { decodeCursor, encodeCursor, pageSize } from "../guarantee-paging";
import {
  type ClearingGuarantee,
  DuplicateGuaranteeError,
  type GuaranteeQuery,
  type GuaranteeRecord,
  type GuaranteeRepository,
  type GuaranteeState,
  type Page,
  type PageRequest,
  type StoredGuarantee,
  type ValidationResponseRecord,
} from "../repositories";
import {
  address,
  bytes32,
  nonNegative,
  positive,
  guaranteeFromRow,
  type GuaranteeRow,
  type Row,
  type SyncOf,
} from "./common";
import { storedLeafHash } from "../../clearing/leaf-hash";

/**
 * A guarantee's key in the payable pool when it enters it (docs/clearing.md "Netting in the database"): one
 * past every key in the pool and every reserved range, so a cycle's range (cycle_reservations) never gains
 * a guarantee after it was reserved. SQLite has one writer at a time: the statement's own transaction
 * orders it. The last entry of the pool index is one step (`ORDER BY … DESC LIMIT 1`; SQLite does not
 * apply its min/max shortcut to `MAX()` under a WHERE: that scanned the whole index, ≈ 10 ms at 1M).
 */
export const NEXT_PAYABLE_KEY = `(SELECT MAX(COALESCE((SELECT payable_seq FROM guarantees INDEXED BY guarantees_pool
    WHERE state = 'FINALIZED_PAYABLE' AND cycle_id IS NULL AND excluded_reason IS NULL
    ORDER BY payable_seq DESC LIMIT 1), 0),
  COALESCE((SELECT MAX(upto_seq) FROM cycle_reservations), 0)) + 1)`;

/** Largest page {@link SqliteGuarantees.listGuarantees} returns when no limit is given. */
export const DEFAULT_GUARANTEE_QUERY_LIMIT = 100_000;

export class SqliteGuarantees implements SyncOf<GuaranteeRepository> {
  private readonly stmt: ReturnType<typeof prepare>;
  private readonly atomic: Atomic;

  constructor(private readonly db: Database) {
    this.stmt = prepare(db);
    this.atomic = atomicRunner(db);
  }

  insertGuarantee(record: GuaranteeRecord): void {
    try {
      // Positional parameters (the hot path: named ones cost a property lookup each).
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
        storedLeafHash(record),
        record.state, // the payable key is taken only for a guarantee stored payable
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

  getClearingGuarantee(guaranteeId: string): ClearingGuarantee | null {
    const row = this.stmt.getGuarantee.get(bytes32(guaranteeId)) as Row | undefined;
    return row ? clearingGuaranteeFromRow(row) : null;
  }

  listGuarantees(query: GuaranteeQuery): ClearingGuarantee[] {
    const { where, params } = guaranteeWhere(query);
    const sql = `SELECT * FROM guarantees${where} ORDER BY seq${query.newestFirst ? " DESC" : ""} LIMIT ?`;
    params.push(query.limit ?? DEFAULT_GUARANTEE_QUERY_LIMIT);
    return (this.db.prepare(sql).all(...params) as Row[]).map(clearingGuaranteeFromRow);
  }

  countGuarantees(query: GuaranteeQuery): number {
    const { where, params } = guaranteeWhere({ ...query, afterSeq: undefined, beforeSeq: undefined });
    const row = this.db.prepare(`SELECT COUNT(*) AS n FROM guarantees${where}`).get(...params) as {
      n: number;
    };
    return Number(row.n);
  }

  transitionGuarantee(
    guaranteeId: string,
    from: readonly GuaranteeState[],
    to: GuaranteeState,
    now: number,
  ): ClearingGuarantee | null {
    return this.atomic(() => {
      const before = this.getClearingGuarantee(guaranteeId);
      if (!before || !from.includes(before.state)) return null;
      this.stmt.setState.run({ state: to, now, id: bytes32(guaranteeId) });
      return before;
    });
  }

  assignGuaranteesToCycle(guaranteeIds: readonly string[], cycleId: number | null): void {
    this.atomic(() => {
      for (const id of guaranteeIds) this.stmt.setCycle.run({ cycleId, id: bytes32(id) });
    });
  }

  setGuaranteeExcluded(guaranteeId: string, reason: string | null): void {
    this.stmt.setExcluded.run({ reason, id: bytes32(guaranteeId) });
  }

  setValidationRequestHash(guaranteeId: string, requestHash: string): void {
    this.stmt.setRequestHash.run(bytes32(requestHash), bytes32(guaranteeId));
  }

  setFinalizationSignature(guaranteeId: string, signature: string): void {
    this.stmt.setFinalization.run(signature.toLowerCase(), bytes32(guaranteeId));
  }

  insertValidationResponse(record: ValidationResponseRecord): void {
    this.stmt.insertResponse.run(
      bytes32(record.txHash),
      record.logIndex,
      bytes32(record.requestHash),
      address(record.validator),
      record.agentId.toString(),
      record.response,
      record.tag,
      record.blockNumber,
      record.blockTimestamp,
    );
  }

  deleteValidationResponse(txHash: string, logIndex: number): void {
    this.stmt.deleteResponse.run(bytes32(txHash), logIndex);
  }

  latestValidationResponse(
    requestHash: string,
    validator: string,
    maxTimestamp: number = Number.MAX_SAFE_INTEGER,
  ): ValidationResponseRecord | null {
    const row = this.stmt.latestResponse.get(bytes32(requestHash), address(validator), maxTimestamp) as
      | Row
      | undefined;
    if (!row) return null;
    return {
      txHash: row.tx_hash as string,
      logIndex: row.log_index as number,
      requestHash: row.request_hash as string,
      validator: row.validator as string,
      agentId: BigInt(row.agent_id as string),
      response: row.response as number,
      tag: row.tag as string,
      blockNumber: row.block_number as number,
      blockTimestamp: row.block_timestamp as number,
    };
  }
}

function prepare(db: Database) {
  const p = (sql: string): Statement => db.prepare(sql);
  return {
    deleteResponse: p("DELETE FROM validation_responses WHERE tx_hash = ? AND log_index = ?"),
    getGuarantee: p("SELECT * FROM guarantees WHERE guarantee_id = ?"),
    insertGuarantee: p(
      `INSERT INTO guarantees
         (guarantee_id, seq, version, user_address, recipient_address, req_id, amount, asset_address, timestamp,
          policy, scheme, signature, certificate_claims, certificate_signature, state, created_at, updated_at,
          leaf_hash, payable_seq)
       VALUES (?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM guarantees), ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,
         CASE WHEN ? = 'FINALIZED_PAYABLE' THEN ${NEXT_PAYABLE_KEY} END)`,
    ),
    insertResponse: p(
      `INSERT OR REPLACE INTO validation_responses (tx_hash, log_index, request_hash, validator, agent_id, response, tag,
         block_number, block_timestamp) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    latestResponse: p(
      `SELECT * FROM validation_responses WHERE request_hash = ? AND validator = ? AND block_timestamp <= ?
       ORDER BY block_number DESC, log_index DESC LIMIT 1`,
    ),
    listByRecipient: p(
      "SELECT * FROM guarantees WHERE recipient_address = ? AND seq > ? ORDER BY seq LIMIT ?",
    ),
    // Back in the pool (no cycle, not excluded): a fresh payable key, after every reserved range.
    setCycle: p(
      `UPDATE guarantees SET cycle_id = @cycleId,
         payable_seq = CASE WHEN @cycleId IS NULL THEN ${NEXT_PAYABLE_KEY} ELSE payable_seq END
       WHERE guarantee_id = @id`,
    ),
    setExcluded: p(
      `UPDATE guarantees SET excluded_reason = @reason,
         payable_seq = CASE WHEN @reason IS NULL THEN ${NEXT_PAYABLE_KEY} ELSE payable_seq END
       WHERE guarantee_id = @id`,
    ),
    setRequestHash: p("UPDATE guarantees SET validation_request_hash = ? WHERE guarantee_id = ?"),
    setFinalization: p("UPDATE guarantees SET finalization_signature = ? WHERE guarantee_id = ?"),
    setState: p(
      `UPDATE guarantees SET state = @state, updated_at = @now,
         payable_seq = CASE WHEN @state = 'FINALIZED_PAYABLE' THEN ${NEXT_PAYABLE_KEY} ELSE payable_seq END
       WHERE guarantee_id = @id`,
    ),
  };
}

function clearingGuaranteeFromRow(row: Row): ClearingGuarantee {
  const guaranteeRow = row as unknown as GuaranteeRow;
  return {
    ...guaranteeFromRow(guaranteeRow),
    seq: guaranteeRow.seq,
    validationRequestHash: guaranteeRow.validation_request_hash ?? null,
  };
}

/** The WHERE clause (with its leading space, or empty) and parameters of a {@link GuaranteeQuery}. */
function guaranteeWhere(query: GuaranteeQuery): { where: string; params: unknown[] } {
  const where: string[] = [];
  const params: unknown[] = [];
  const eq = (column: string, value: unknown) => {
    where.push(`${column} = ?`);
    params.push(value);
  };
  if (query.states && query.states.length > 0) {
    where.push(`state IN (${query.states.map(() => "?").join(", ")})`);
    params.push(...query.states);
  }
  if (query.guaranteeId !== undefined) eq("guarantee_id", query.guaranteeId.toLowerCase());
  if (query.cycleId !== undefined) eq("cycle_id", query.cycleId);
  if (query.cycleIds !== undefined) {
    where.push(`cycle_id IN (${query.cycleIds.map(() => "?").join(", ") || "NULL"})`);
    params.push(...query.cycleIds);
  }
  if (query.user !== undefined) eq("user_address", address(query.user));
  if (query.recipient !== undefined) eq("recipient_address", address(query.recipient));
  if (query.party !== undefined) {
    where.push("(user_address = ? OR recipient_address = ?)");
    params.push(address(query.party), address(query.party));
  }
  if (query.asset !== undefined) eq("asset_address", address(query.asset));
  if (query.version !== undefined) eq("version", query.version);
  if (query.unassigned) where.push("cycle_id IS NULL AND excluded_reason IS NULL");
  if (query.inCycle) where.push("cycle_id IS NOT NULL AND excluded_reason IS NULL");
  if (query.missingRequestHash) where.push("validation_request_hash IS NULL");
  if (query.createdFrom !== undefined) {
    where.push("created_at >= ?");
    params.push(query.createdFrom);
  }
  if (query.createdTo !== undefined) {
    where.push("created_at < ?");
    params.push(query.createdTo);
  }
  if (query.afterSeq !== undefined) {
    where.push("seq > ?");
    params.push(query.afterSeq);
  }
  if (query.beforeSeq !== undefined) {
    where.push("seq < ?");
    params.push(query.beforeSeq);
  }
  return { where: where.length > 0 ? ` WHERE ${where.join(" AND ")}` : "", params };
}
