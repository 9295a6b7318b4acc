/** {@link GuaranteeRepository} on PostgreSQL: records, transitions, clearing columns, V2 responses. */
import { decodeXidCursor, encodeXidCursor, pageSize } from "../guarantee-paging";
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
  guaranteeFromRow,
  type GuaranteeRow,
  nonNegative,
  positive,
} from "../sqlite/common";
import { storedLeafHash } from "../../clearing/leaf-hash";
import { DEFAULT_GUARANTEE_QUERY_LIMIT } from "../sqlite/guarantees";
import { type PgConn, type Row, UNIQUE_VIOLATION } from "./common";

const INSERT_GUARANTEE = `INSERT INTO guarantees
  (guarantee_id, version, user_address, recipient_address, req_id, amount, asset_address, timestamp,
   policy, scheme, signature, certificate_claims, certificate_signature, state, created_at, updated_at, leaf_hash,
   payable_xid, payable_seq)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $15, $16,
    CASE WHEN $14 = 'FINALIZED_PAYABLE' THEN pg_current_xact_id() END,
    CASE WHEN $14 = 'FINALIZED_PAYABLE' THEN nextval('guarantees_payable_seq') END)`;

/**
 * A guarantee's key in the payable pool, taken each time it enters it (docs/clearing.md "Netting in the
 * database"): this transaction's id and the next number of the sequence. A cycle's range ends below every
 * transaction in flight, so a key taken by a transaction that commits later is always after it.
 */
export const FRESH_PAYABLE_KEY =
  "payable_xid = pg_current_xact_id(), payable_seq = nextval('guarantees_payable_seq')";

export class PgGuarantees implements GuaranteeRepository {
  constructor(private readonly db: PgConn) {}

  private params(record: GuaranteeRecord): unknown[] {
    return [
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
      storedLeafHash(record),
    ];
  }

  async insertGuarantee(record: GuaranteeRecord): Promise<void> {
    try {
      await this.db.query(INSERT_GUARANTEE, this.params(record));
    } catch (error) {
      if ((error as { code?: string }).code === UNIQUE_VIOLATION) {
        throw new DuplicateGuaranteeError(record.guaranteeId.toLowerCase());
      }
      throw error;
    }
  }

  /**
   * Inserts the record unless its id exists (the primary key decides, also against another replica's
   * concurrent insert: this waits for that transaction and then does nothing). True iff inserted.
   */
  async insertGuaranteeIfNew(record: GuaranteeRecord): Promise<boolean> {
    const result = await this.db.query(
      `${INSERT_GUARANTEE} ON CONFLICT (guarantee_id) DO NOTHING`,
      this.params(record),
    );
    return result.rowCount === 1;
  }

  async getGuarantee(guaranteeId: string): Promise<StoredGuarantee | null> {
    const row = await this.row(guaranteeId);
    return row ? guaranteeFromRow(row) : null;
  }

  /** The stored records among `guaranteeIds`, in one statement, by lower-case id. */
  async getGuarantees(guaranteeIds: readonly string[]): Promise<Map<string, StoredGuarantee>> {
    const { rows } = await this.db.query<GuaranteeRow & Row>(
      "SELECT * FROM guarantees WHERE guarantee_id = ANY($1::text[])",
      [guaranteeIds.map(bytes32)],
    );
    return new Map(rows.map((row) => [String(row.guarantee_id).toLowerCase(), guaranteeFromRow(row)]));
  }

  private async row(guaranteeId: string): Promise<GuaranteeRow | undefined> {
    const { rows } = await this.db.query<GuaranteeRow & Row>(
      "SELECT * FROM guarantees WHERE guarantee_id = $1",
      [bytes32(guaranteeId)],
    );
    return rows[0];
  }

  /**
   * Pages on (inserting transaction id, seq), and returns only rows whose transaction is older than every
   * transaction still in flight (`ins_xid < pg_snapshot_xmin`). `seq` alone is not commit-ordered here:
   * transactions commit in any order, so a reader could page past seq 12 before seq 11 commits and never see
   * 11. Every row that becomes visible later belongs to a transaction still in flight now (or not begun),
   * whose id is at least that xmin, above every row returned: it sorts after the cursor, never behind it.
   * The price: a row shows up only once every older transaction has ended (issuance transactions are
   * short). docs/scale-out.md, "Paging under concurrent inserts".
   */
  async listGuaranteesByRecipient(recipient: string, page: PageRequest = {}): Promise<Page<StoredGuarantee>> {
    const limit = pageSize(page.limit);
    const after =
      page.cursor === undefined || page.cursor === null ? { xid: "0", seq: 0 } : decodeXidCursor(page.cursor);
    const { rows } = await this.db.query<GuaranteeRow & Row & { ins_xid: string }>(
      `SELECT * FROM guarantees
       WHERE recipient_address = $1 AND (ins_xid, seq) > ($2::xid8, $3::bigint)
         AND ins_xid < pg_snapshot_xmin(pg_current_snapshot())
       ORDER BY ins_xid, seq LIMIT $4`,
      [address(recipient), after.xid, after.seq, limit + 1],
    );
    const items = rows.slice(0, limit);
    const last = items.at(-1);
    return {
      items: items.map(guaranteeFromRow),
      nextCursor: rows.length > limit && last ? encodeXidCursor(String(last.ins_xid), last.seq) : null,
    };
  }

  async getClearingGuarantee(guaranteeId: string): Promise<ClearingGuarantee | null> {
    const row = await this.row(guaranteeId);
    return row ? clearingGuaranteeFromRow(row) : null;
  }

  async listGuarantees(query: GuaranteeQuery): Promise<ClearingGuarantee[]> {
    const { where, params } = guaranteeWhere(query);
    params.push(query.limit ?? DEFAULT_GUARANTEE_QUERY_LIMIT);
    const sql = `SELECT * FROM guarantees${where} ORDER BY seq${query.newestFirst ? " DESC" : ""} LIMIT $${params.length}`;
    const { rows } = await this.db.query<GuaranteeRow & Row>(sql, params);
    return rows.map(clearingGuaranteeFromRow);
  }

  async countGuarantees(query: GuaranteeQuery): Promise<number> {
    const { where, params } = guaranteeWhere({ ...query, afterSeq: undefined, beforeSeq: undefined });
    const { rows } = await this.db.query<{ n: string }>(
      `SELECT COUNT(*) AS n FROM guarantees${where}`,
      params,
    );
    return Number(rows[0].n);
  }

  async transitionGuarantee(
    guaranteeId: string,
    from: readonly GuaranteeState[],
    to: GuaranteeState,
    now: number,
  ): Promise<ClearingGuarantee | null> {
    // FOR UPDATE: a concurrent transition of the same guarantee waits and then re-checks the state.
    const { rows } = await this.db.query<GuaranteeRow & Row>(
      "SELECT * FROM guarantees WHERE guarantee_id = $1 FOR UPDATE",
      [bytes32(guaranteeId)],
    );
    const before = rows[0] ? clearingGuaranteeFromRow(rows[0]) : null;
    if (!before || !from.includes(before.state)) return null;
    await this.db.query(
      to === "FINALIZED_PAYABLE"
        ? `UPDATE guarantees SET state = $1, updated_at = $2, ${FRESH_PAYABLE_KEY} WHERE guarantee_id = $3`
        : "UPDATE guarantees SET state = $1, updated_at = $2 WHERE guarantee_id = $3",
      [to, now, bytes32(guaranteeId)],
    );
    return before;
  }

  async assignGuaranteesToCycle(guaranteeIds: readonly string[], cycleId: number | null): Promise<void> {
    if (guaranteeIds.length === 0) return;
    // Back in the pool (no cycle): a fresh payable key, after every reserved range.
    await this.db.query(
      cycleId === null
        ? `UPDATE guarantees SET cycle_id = NULL, ${FRESH_PAYABLE_KEY} WHERE guarantee_id = ANY($1::text[])`
        : "UPDATE guarantees SET cycle_id = $2 WHERE guarantee_id = ANY($1::text[])",
      cycleId === null ? [guaranteeIds.map(bytes32)] : [guaranteeIds.map(bytes32), cycleId],
    );
  }

  async setGuaranteeExcluded(guaranteeId: string, reason: string | null): Promise<void> {
    await this.db.query(
      reason === null
        ? `UPDATE guarantees SET excluded_reason = NULL, ${FRESH_PAYABLE_KEY} WHERE guarantee_id = $1`
        : "UPDATE guarantees SET excluded_reason = $2 WHERE guarantee_id = $1",
      reason === null ? [bytes32(guaranteeId)] : [bytes32(guaranteeId), reason],
    );
  }

  async setFinalizationSignature(guaranteeId: string, signature: string): Promise<void> {
    await this.db.query("UPDATE guarantees SET finalization_signature = $1 WHERE guarantee_id = $2", [
      signature.toLowerCase(),
      bytes32(guaranteeId),
    ]);
  }

  async setValidationRequestHash(guaranteeId: string, requestHash: string): Promise<void> {
    await this.db.query("UPDATE guarantees SET validation_request_hash = $1 WHERE guarantee_id = $2", [
      bytes32(requestHash),
      bytes32(guaranteeId),
    ]);
  }

  async insertValidationResponse(record: ValidationResponseRecord): Promise<void> {
    await this.db.query(
      `INSERT INTO validation_responses (tx_hash, log_index, request_hash, validator, agent_id, response, tag,
         block_number, block_timestamp) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
       ON CONFLICT (tx_hash, log_index) DO UPDATE SET request_hash = excluded.request_hash,
         validator = excluded.validator, agent_id = excluded.agent_id, response = excluded.response,
         tag = excluded.tag, block_number = excluded.block_number, block_timestamp = excluded.block_timestamp`,
      [
        bytes32(record.txHash),
        record.logIndex,
        bytes32(record.requestHash),
        address(record.validator),
        record.agentId.toString(),
        record.response,
        record.tag,
        record.blockNumber,
        record.blockTimestamp,
      ],
    );
  }

  async deleteValidationResponse(txHash: string, logIndex: number): Promise<void> {
    await this.db.query("DELETE FROM validation_responses WHERE tx_hash = $1 AND log_index = $2", [
      bytes32(txHash),
      logIndex,
    ]);
  }

  async latestValidationResponse(
    requestHash: string,
    validator: string,
    maxTimestamp: number = Number.MAX_SAFE_INTEGER,
  ): Promise<ValidationResponseRecord | null> {
    const { rows } = await this.db.query(
      `SELECT * FROM validation_responses WHERE request_hash = $1 AND validator = $2 AND block_timestamp <= $3
       ORDER BY block_number DESC, log_index DESC LIMIT 1`,
      [bytes32(requestHash), address(validator), maxTimestamp],
    );
    const row = rows[0];
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

function clearingGuaranteeFromRow(row: GuaranteeRow): ClearingGuarantee {
  return {
    ...guaranteeFromRow(row),
    seq: row.seq,
    validationRequestHash: row.validation_request_hash ?? null,
  };
}

/** The WHERE clause (with its leading space, or empty) and parameters ($1…) of a {@link GuaranteeQuery}. */
function guaranteeWhere(query: GuaranteeQuery): { where: string; params: unknown[] } {
  const where: string[] = [];
  const params: unknown[] = [];
  const param = (value: unknown) => {
    params.push(value);
    return `$${params.length}`;
  };
  if (query.states && query.states.length > 0) where.push(`state = ANY(${param([...query.states])}::text[])`);
  if (query.guaranteeId !== undefined) where.push(`guarantee_id = ${param(bytes32(query.guaranteeId))}`);
  if (query.cycleId !== undefined) where.push(`cycle_id = ${param(query.cycleId)}`);
  if (query.cycleIds !== undefined) where.push(`cycle_id = ANY(${param([...query.cycleIds])}::bigint[])`);
  if (query.user !== undefined) where.push(`user_address = ${param(address(query.user))}`);
  if (query.recipient !== undefined) where.push(`recipient_address = ${param(address(query.recipient))}`);
  if (query.party !== undefined) {
    const party = param(address(query.party));
    where.push(`(user_address = ${party} OR recipient_address = ${party})`);
  }
  if (query.asset !== undefined) where.push(`asset_address = ${param(address(query.asset))}`);
  if (query.version !== undefined) where.push(`version = ${param(query.version)}`);
  if (query.unassigned) where.push("cycle_id IS NULL AND excluded_reason IS NULL");
  if (query.inCycle) where.push("cycle_id IS NOT NULL AND excluded_reason IS NULL");
  if (query.missingRequestHash) where.push("validation_request_hash IS NULL");
  if (query.createdFrom !== undefined) where.push(`created_at >= ${param(query.createdFrom)}`);
  if (query.createdTo !== undefined) where.push(`created_at < ${param(query.createdTo)}`);
  if (query.afterSeq !== undefined) where.push(`seq > ${param(query.afterSeq)}`);
  if (query.beforeSeq !== undefined) where.push(`seq < ${param(query.beforeSeq)}`);
  return { where: where.length > 0 ? ` WHERE ${where.join(" AND ")}` : "", params };
}
