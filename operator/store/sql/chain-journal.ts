/** {@link ChainJournalRepository} for both engines (tables `chain_cursor`, `chain_blocks`, `chain_events`). */
import type { ChainBlock, ChainCursor, ChainEventRecord, ChainJournalRepository } from "../repositories";
import { bytes32 } from "../values";
import type { SqlEngine } from "./engine";
import type { ChainBlocksTable, ChainEventsTable } from "./schema";

export class ChainJournal implements ChainJournalRepository {
  constructor(private readonly sql: SqlEngine) {}

  async getChainCursor(): Promise<ChainCursor | null> {
    const row = await this.sql.first(this.sql.db.selectFrom("chain_cursor").selectAll().where("id", "=", 1));
    return row ? blockFromRow(row) : null;
  }

  async setChainCursor(cursor: ChainCursor | null, now: number): Promise<void> {
    const { db } = this.sql;
    if (cursor === null) {
      await this.sql.run(db.deleteFrom("chain_cursor").where("id", "=", 1));
      return;
    }
    const values = {
      block_number: cursor.blockNumber,
      block_hash: bytes32(cursor.blockHash),
      block_timestamp: cursor.blockTimestamp,
      updated_at: now,
    };
    await this.sql.run(
      db
        .insertInto("chain_cursor")
        .values({ id: 1, ...values })
        .onConflict((conflict) => conflict.column("id").doUpdateSet(values)),
    );
  }

  async recordChainBlock(block: ChainBlock): Promise<void> {
    const values = { block_hash: bytes32(block.blockHash), block_timestamp: block.blockTimestamp };
    await this.sql.run(
      this.sql.db
        .insertInto("chain_blocks")
        .values({ block_number: block.blockNumber, ...values })
        .onConflict((conflict) => conflict.column("block_number").doUpdateSet(values)),
    );
  }

  async listChainBlocks(atOrBelow: number, limit: number): Promise<ChainBlock[]> {
    const rows = await this.sql.all(
      this.sql.db
        .selectFrom("chain_blocks")
        .selectAll()
        .where("block_number", "<=", atOrBelow)
        .orderBy("block_number", "desc")
        .limit(limit),
    );
    return rows.map(blockFromRow);
  }

  async deleteChainBlocks(above: number, pruneBelow?: number): Promise<void> {
    const { db } = this.sql;
    await this.sql.atomic(async () => {
      await this.sql.run(db.deleteFrom("chain_blocks").where("block_number", ">", above));
      if (pruneBelow !== undefined) {
        await this.sql.run(db.deleteFrom("chain_blocks").where("block_number", "<", pruneBelow));
      }
    });
  }

  async getChainEvent(txHash: string, logIndex: number): Promise<ChainEventRecord | null> {
    const row = await this.sql.first(
      this.sql.db
        .selectFrom("chain_events")
        .selectAll()
        .where("tx_hash", "=", bytes32(txHash))
        .where("log_index", "=", logIndex),
    );
    return row ? eventFromRow(row) : null;
  }

  async insertChainEvent(record: ChainEventRecord): Promise<void> {
    await this.sql.run(
      this.sql.db.insertInto("chain_events").values({
        tx_hash: bytes32(record.txHash),
        log_index: record.logIndex,
        block_number: record.blockNumber,
        block_hash: bytes32(record.blockHash),
        block_timestamp: record.blockTimestamp,
        contract: record.contract,
        name: record.name,
        args: JSON.stringify(record.args),
        undo: JSON.stringify(record.undo),
        applied_at: record.appliedAt,
      }),
    );
  }

  async listChainEventsAbove(blockNumber: number): Promise<ChainEventRecord[]> {
    const rows = await this.sql.all(
      this.sql.db
        .selectFrom("chain_events")
        .selectAll()
        .where("block_number", ">", blockNumber)
        .orderBy("block_number", "desc")
        .orderBy("log_index", "desc"),
    );
    return rows.map(eventFromRow);
  }

  async listChainEventsNamed(contract: string, name: string): Promise<ChainEventRecord[]> {
    const rows = await this.sql.all(
      this.sql.db
        .selectFrom("chain_events")
        .selectAll()
        .where("contract", "=", contract)
        .where("name", "=", name)
        .orderBy("block_number")
        .orderBy("log_index"),
    );
    return rows.map(eventFromRow);
  }

  async deleteChainEvent(txHash: string, logIndex: number): Promise<void> {
    await this.sql.run(
      this.sql.db
        .deleteFrom("chain_events")
        .where("tx_hash", "=", bytes32(txHash))
        .where("log_index", "=", logIndex),
    );
  }

  deleteChainEventsBelow(blockNumber: number): Promise<number> {
    return this.sql.run(this.sql.db.deleteFrom("chain_events").where("block_number", "<", blockNumber));
  }
}

function blockFromRow(row: ChainBlocksTable): ChainBlock {
  return { blockNumber: row.block_number, blockHash: row.block_hash, blockTimestamp: row.block_timestamp };
}

function eventFromRow(row: ChainEventsTable): ChainEventRecord {
  return {
    txHash: row.tx_hash,
    logIndex: row.log_index,
    blockNumber: row.block_number,
    blockHash: row.block_hash,
    blockTimestamp: row.block_timestamp,
    contract: row.contract,
    name: row.name,
    args: JSON.parse(row.args) as Record<string, unknown>,
    undo: JSON.parse(row.undo) as unknown[],
    appliedAt: row.applied_at,
  };
}
