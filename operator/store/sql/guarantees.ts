/**
 * {@link GuaranteeRepository} for both engines: records, transitions, clearing columns, V2 responses. The
 * payable key a guarantee takes as it enters the payable pool, the insert (issuance's hot path) and the
 * recipient's paging order differ between the engines: {@link PayableKeys}.
 */
import { type Expression, type SqlBool, sql as raw } from "kysely";
import { pageSize } from "../guarantee-paging";
import type {
  ClearingGuarantee,
  GuaranteeQuery,
  GuaranteeRecord,
  GuaranteeRepository,
  GuaranteeState,
  Page,
  PageRequest,
  StoredGuarantee,
  ValidationResponseRecord,
  VerdictPin,
} from "../repositories";
import { address, bytes32 } from "../values";
import type { SqlEngine } from "./engine";
import { clearingGuaranteeFromRow, type GuaranteeRow, guaranteeFromRow } from "./guarantee-rows";
import { PIN_AWAITED_SQL, type PayableKeys } from "./payable-keys";
import { precompile } from "./precompiled";

/** Largest page {@link Guarantees.listGuarantees} returns when no limit is given. */
export const DEFAULT_GUARANTEE_QUERY_LIMIT = 100_000;

/** Ids per statement when a list of ids is written (both engines' parameter limits are far above). */
const IDS_PER_STATEMENT = 1_000;

/*
 * The reads and the state write of one guarantee, compiled once per engine (sql/precompiled.ts): the
 * commit indexer runs them once per guarantee of a cycle (commit-handlers.ts), where building and compiling
 * them each time was ≈ 10 % of its CPU per guarantee (SQLite, 20,000 guarantees).
 */
const ROW = precompile((db, arg) =>
  db.selectFrom("guarantees").selectAll().where("guarantee_id", "=", arg<string>(0)),
);
const ROW_FOR_UPDATE = precompile((db, arg) =>
  db.selectFrom("guarantees").selectAll().where("guarantee_id", "=", arg<string>(0)).forUpdate(),
);
const SET_STATE = precompile((db, arg) =>
  db
    .updateTable("guarantees")
    .set({ state: arg<GuaranteeState>(0), updated_at: arg<number>(1) })
    .where("guarantee_id", "=", arg<string>(2)),
);

export class Guarantees implements GuaranteeRepository {
  constructor(
    private readonly sql: SqlEngine,
    private readonly keys: PayableKeys,
  ) {}

  async insertGuarantee(record: GuaranteeRecord): Promise<void> {
    await this.keys.insertGuarantee(record, false);
  }

  /**
   * Inserts the record unless its id exists (the primary key decides, also against another replica's
   * concurrent insert: PostgreSQL waits for that transaction and then does nothing). True iff inserted.
   */
  insertGuaranteeIfNew(record: GuaranteeRecord): Promise<boolean> {
    return this.keys.insertGuarantee(record, true);
  }

  async getGuarantee(guaranteeId: string): Promise<StoredGuarantee | null> {
    const row = await this.row(guaranteeId);
    return row ? guaranteeFromRow(row) : null;
  }

  /** The stored records among `guaranteeIds`, in one statement, by lower-case id. */
  async getGuarantees(guaranteeIds: readonly string[]): Promise<Map<string, StoredGuarantee>> {
    if (guaranteeIds.length === 0) return new Map();
    const rows = (await this.sql.all(
      this.sql.db.selectFrom("guarantees").selectAll().where("guarantee_id", "in", guaranteeIds.map(bytes32)),
    )) as GuaranteeRow[];
    return new Map(rows.map((row) => [row.guarantee_id.toLowerCase(), guaranteeFromRow(row)]));
  }

  async listGuaranteesByRecipient(recipient: string, page: PageRequest = {}): Promise<Page<StoredGuarantee>> {
    const limit = pageSize(page.limit);
    // One extra row tells whether another page exists.
    const rows = await this.keys.recipientRows(recipient, page.cursor ?? null, limit + 1);
    const items = rows.slice(0, limit);
    const last = items.at(-1);
    return {
      items: items.map(guaranteeFromRow),
      nextCursor: rows.length > limit && last ? this.keys.recipientCursor(last) : null,
    };
  }

  async getClearingGuarantee(guaranteeId: string): Promise<ClearingGuarantee | null> {
    const row = await this.row(guaranteeId);
    return row ? clearingGuaranteeFromRow(row) : null;
  }

  async listGuarantees(query: GuaranteeQuery): Promise<ClearingGuarantee[]> {
    const rows = (await this.sql.all(
      this.sql.db
        .selectFrom("guarantees")
        .selectAll()
        .where(guaranteeWhere(query))
        .orderBy("seq", query.newestFirst ? "desc" : "asc")
        .limit(query.limit ?? DEFAULT_GUARANTEE_QUERY_LIMIT),
    )) as GuaranteeRow[];
    return rows.map(clearingGuaranteeFromRow);
  }

  async countGuarantees(query: GuaranteeQuery): Promise<number> {
    const row = await this.sql.first(
      this.sql.db
        .selectFrom("guarantees")
        .select((eb) => eb.fn.countAll().as("n"))
        .where(guaranteeWhere({ ...query, afterSeq: undefined, beforeSeq: undefined })),
    );
    return Number(row?.n ?? 0);
  }

  transitionGuarantee(
    guaranteeId: string,
    from: readonly GuaranteeState[],
    to: GuaranteeState,
    now: number,
  ): Promise<ClearingGuarantee | null> {
    return this.sql.atomic(async () => {
      // Row lock (PostgreSQL): a concurrent transition of the same guarantee waits, then re-checks the state.
      const row = await this.row(guaranteeId, this.sql.rowLocks);
      const before = row ? clearingGuaranteeFromRow(row) : null;
      if (!before || !from.includes(before.state)) return null;
      if (to === "FINALIZED_PAYABLE") {
        await this.sql.run(
          this.sql.db
            .updateTable("guarantees")
            .set({ state: to, updated_at: now, ...this.keys.freshKey() })
            .where("guarantee_id", "=", bytes32(guaranteeId)),
        );
      } else {
        await this.sql.run(SET_STATE.with(this.sql, to, now, bytes32(guaranteeId)));
      }
      return before;
    });
  }

  assignGuaranteesToCycle(guaranteeIds: readonly string[], cycleId: number | null): Promise<void> {
    return this.sql.atomic(async () => {
      for (let i = 0; i < guaranteeIds.length; i += IDS_PER_STATEMENT) {
        const ids = guaranteeIds.slice(i, i + IDS_PER_STATEMENT).map(bytes32);
        const these = raw<SqlBool>`guarantee_id IN (${raw.join(ids)})`;
        // Back in the pool (no cycle): a fresh payable key, after every reserved range.
        if (cycleId === null) await this.keys.refresh(these, "seq", true);
        else
          await this.sql.run(this.sql.db.updateTable("guarantees").set({ cycle_id: cycleId }).where(these));
      }
    });
  }

  async setGuaranteeExcluded(guaranteeId: string, reason: string | null): Promise<void> {
    await this.sql.run(
      this.sql.db
        .updateTable("guarantees")
        // Back in the pool (not excluded): a fresh payable key, after every reserved range.
        .set({ excluded_reason: reason, ...(reason === null ? this.keys.freshKey() : {}) })
        .where("guarantee_id", "=", bytes32(guaranteeId)),
    );
  }

  async setValidationRequestHash(guaranteeId: string, requestHash: string): Promise<void> {
    await this.sql.run(
      this.sql.db
        .updateTable("guarantees")
        .set({ validation_request_hash: bytes32(requestHash) })
        .where("guarantee_id", "=", bytes32(guaranteeId)),
    );
  }

  async setFinalizationSignature(guaranteeId: string, signature: string): Promise<void> {
    await this.sql.run(
      this.sql.db
        .updateTable("guarantees")
        .set({ finalization_signature: signature.toLowerCase() })
        .where("guarantee_id", "=", bytes32(guaranteeId)),
    );
  }

  async verdictPinOf(guaranteeId: string): Promise<VerdictPin | null> {
    const row = await this.sql.first(
      this.sql.db
        .selectFrom("guarantees")
        .select("verdict_pin")
        .where("guarantee_id", "=", bytes32(guaranteeId)),
    );
    return (row?.verdict_pin ?? null) as VerdictPin | null;
  }

  setVerdictPin(guaranteeId: string, pin: VerdictPin | null): Promise<void> {
    const id = bytes32(guaranteeId);
    return this.sql.atomic(async () => {
      if (pin === "pinned") {
        // A payable guarantee waiting for this pin enters the pool now (POOL_SQL): a fresh payable key,
        // after every reserved range. One already in the pool (V1, payer-finalized, pinned) keeps its key,
        // so that a pin by anyone never moves a guarantee out of a range reserved for a cycle.
        await this.keys.refresh(
          raw<SqlBool>`guarantee_id = ${id} AND state = 'FINALIZED_PAYABLE' AND ${raw.raw(PIN_AWAITED_SQL)}`,
          "seq",
          false,
        );
      }
      await this.sql.run(
        this.sql.db.updateTable("guarantees").set({ verdict_pin: pin }).where("guarantee_id", "=", id),
      );
    });
  }

  setVerdictPinsSent(guaranteeIds: readonly string[], at: number): Promise<void> {
    return this.sql.atomic(async () => {
      for (let i = 0; i < guaranteeIds.length; i += IDS_PER_STATEMENT) {
        const ids = guaranteeIds.slice(i, i + IDS_PER_STATEMENT).map(bytes32);
        await this.sql.run(
          this.sql.db
            .updateTable("guarantees")
            .set({ verdict_pin: "sent", verdict_pin_at: at })
            .where(
              raw<SqlBool>`guarantee_id IN (${raw.join(ids)}) AND (verdict_pin IS NULL OR verdict_pin <> 'pinned')`,
            ),
        );
      }
    });
  }

  async verdictPinWait(): Promise<{ waiting: number; oldestPayableAt: number | null }> {
    // Over the partial index guarantees_pin_wait (migration 18): its predicate, word for word.
    const row = await this.sql.first(
      this.sql.db
        .selectFrom("guarantees")
        .select((eb) => [eb.fn.countAll().as("n"), eb.fn.min("verdict_payable_at").as("oldest")])
        .where(raw<SqlBool>`state = 'FINALIZED_PAYABLE' AND ${raw.raw(PIN_AWAITED_SQL)}`),
    );
    const oldest = row?.oldest;
    return {
      waiting: Number(row?.n ?? 0),
      oldestPayableAt: oldest === null || oldest === undefined ? null : Number(oldest),
    };
  }

  async setVerdictPayable(guaranteeId: string, at: number): Promise<void> {
    await this.sql.run(
      this.sql.db
        .updateTable("guarantees")
        .set({ verdict_payable_at: at })
        .where("guarantee_id", "=", bytes32(guaranteeId)),
    );
  }

  async insertValidationResponse(record: ValidationResponseRecord): Promise<void> {
    const values = {
      request_hash: bytes32(record.requestHash),
      validator: address(record.validator),
      agent_id: record.agentId.toString(),
      response: record.response,
      tag: record.tag,
      block_number: record.blockNumber,
      block_timestamp: record.blockTimestamp,
    };
    await this.sql.run(
      this.sql.db
        .insertInto("validation_responses")
        .values({ tx_hash: bytes32(record.txHash), log_index: record.logIndex, ...values })
        .onConflict((conflict) => conflict.columns(["tx_hash", "log_index"]).doUpdateSet(values)),
    );
  }

  async deleteValidationResponse(txHash: string, logIndex: number): Promise<void> {
    await this.sql.run(
      this.sql.db
        .deleteFrom("validation_responses")
        .where("tx_hash", "=", bytes32(txHash))
        .where("log_index", "=", logIndex),
    );
  }

  async latestValidationResponse(
    requestHash: string,
    validator: string,
    maxTimestamp: number = Number.MAX_SAFE_INTEGER,
  ): Promise<ValidationResponseRecord | null> {
    const row = await this.sql.first(
      this.sql.db
        .selectFrom("validation_responses")
        .selectAll()
        .where("request_hash", "=", bytes32(requestHash))
        .where("validator", "=", address(validator))
        .where("block_timestamp", "<=", maxTimestamp)
        .orderBy("block_number", "desc")
        .orderBy("log_index", "desc")
        .limit(1),
    );
    if (!row) return null;
    return {
      txHash: row.tx_hash,
      logIndex: Number(row.log_index),
      requestHash: row.request_hash,
      validator: row.validator,
      agentId: BigInt(row.agent_id),
      response: Number(row.response),
      tag: row.tag,
      blockNumber: Number(row.block_number),
      blockTimestamp: Number(row.block_timestamp),
    };
  }

  /** One guarantee's row (`lock`: FOR UPDATE). */
  private async row(guaranteeId: string, lock = false): Promise<GuaranteeRow | undefined> {
    const select = (lock ? ROW_FOR_UPDATE : ROW).with(this.sql, bytes32(guaranteeId));
    return (await this.sql.first(select)) as GuaranteeRow | undefined;
  }
}

/** The filter of a {@link GuaranteeQuery} (every row when it sets nothing). */
function guaranteeWhere(query: GuaranteeQuery): Expression<SqlBool> {
  const where: Expression<SqlBool>[] = [];
  const eq = (column: string, value: unknown) => where.push(raw<SqlBool>`${raw.ref(column)} = ${value}`);
  if (query.states && query.states.length > 0) {
    where.push(raw<SqlBool>`state IN (${raw.join(query.states)})`);
  }
  if (query.guaranteeId !== undefined) eq("guarantee_id", bytes32(query.guaranteeId));
  if (query.cycleId !== undefined) eq("cycle_id", query.cycleId);
  if (query.cycleIds !== undefined) {
    where.push(
      query.cycleIds.length === 0
        ? raw<SqlBool>`1 = 0`
        : raw<SqlBool>`cycle_id IN (${raw.join(query.cycleIds)})`,
    );
  }
  if (query.user !== undefined) eq("user_address", address(query.user));
  if (query.recipient !== undefined) eq("recipient_address", address(query.recipient));
  if (query.party !== undefined) {
    const party = address(query.party);
    where.push(raw<SqlBool>`(user_address = ${party} OR recipient_address = ${party})`);
  }
  if (query.asset !== undefined) eq("asset_address", address(query.asset));
  if (query.version !== undefined) eq("version", query.version);
  if (query.unassigned) where.push(raw<SqlBool>`cycle_id IS NULL AND excluded_reason IS NULL`);
  if (query.inCycle) where.push(raw<SqlBool>`cycle_id IS NOT NULL AND excluded_reason IS NULL`);
  if (query.missingRequestHash) where.push(raw<SqlBool>`validation_request_hash IS NULL`);
  if (query.verdictToPin) {
    where.push(
      query.pinSentBefore === undefined
        ? raw<SqlBool>`finalization_signature IS NULL AND verdict_pin IS NULL`
        : raw<SqlBool>`finalization_signature IS NULL AND (verdict_pin IS NULL
            OR (verdict_pin = 'sent' AND COALESCE(verdict_pin_at, 0) <= ${query.pinSentBefore}))`,
    );
  }
  if (query.createdFrom !== undefined) where.push(raw<SqlBool>`created_at >= ${query.createdFrom}`);
  if (query.createdTo !== undefined) where.push(raw<SqlBool>`created_at < ${query.createdTo}`);
  if (query.afterSeq !== undefined) where.push(raw<SqlBool>`seq > ${query.afterSeq}`);
  if (query.beforeSeq !== undefined) where.push(raw<SqlBool>`seq < ${query.beforeSeq}`);
  return where.length === 0 ? raw<SqlBool>`1 = 1` : raw<SqlBool>`${raw.join(where, raw` AND `)}`;
}
