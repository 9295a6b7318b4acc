/** {@link ChainJournalRepository} on a better-sqlite3 connection (schema: migration 2). */
import type { Database, Statement } from "better-sqlite3";
import {
  type ChainBlock,
  type ChainCursor,
  type ChainEventRecord,
  type ChainJournalRepository,
} from "../repositories";
import { bytes32, type Row, type SyncOf } from "./common";

export class SqliteChainJournal implements SyncOf<ChainJournalRepository> {
  private readonly stmt: ReturnType<typeof prepare>;

  constructor(db: Database) {
    this.stmt = prepare(db);
  }

  getChainCursor(): ChainCursor | null {
    const row = this.stmt.getCursor.get() as Row | undefined;
    if (!row) return null;
    return {
      blockNumber: row.block_number as number,
      blockHash: row.block_hash as string,
      blockTimestamp: row.block_timestamp as number,
    };
  }

  setChainCursor(cursor: ChainCursor | null, now: number): void {
    if (cursor === null) {
      this.stmt.deleteCursor.run();
      return;
    }
    this.stmt.putCursor.run(cursor.blockNumber, bytes32(cursor.blockHash), cursor.blockTimestamp, now);
  }

  recordChainBlock(block: ChainBlock): void {
    this.stmt.putBlock.run(block.blockNumber, bytes32(block.blockHash), block.blockTimestamp);
  }

  listChainBlocks(atOrBelow: number, limit: number): ChainBlock[] {
    return (this.stmt.listBlocks.all(atOrBelow, limit) as Row[]).map((row) => ({
      blockNumber: row.block_number as number,
      blockHash: row.block_hash as string,
      blockTimestamp: row.block_timestamp as number,
    }));
  }

  deleteChainBlocks(above: number, pruneBelow?: number): void {
    this.stmt.deleteBlocksAbove.run(above);
    if (pruneBelow !== undefined) this.stmt.deleteBlocksBelow.run(pruneBelow);
  }

  getChainEvent(txHash: string, logIndex: number): ChainEventRecord | null {
    const row = this.stmt.getEvent.get(bytes32(txHash), logIndex) as Row | undefined;
    return row ? eventFromRow(row) : null;
  }

  insertChainEvent(record: ChainEventRecord): void {
    this.stmt.insertEvent.run(
      bytes32(record.txHash),
      record.logIndex,
      record.blockNumber,
      bytes32(record.blockHash),
      record.blockTimestamp,
      record.contract,
      record.name,
      JSON.stringify(record.args),
      JSON.stringify(record.undo),
      record.appliedAt,
    );
  }

  listChainEventsAbove(blockNumber: number): ChainEventRecord[] {
    return (this.stmt.eventsAbove.all(blockNumber) as Row[]).map(eventFromRow);
  }

  listChainEventsNamed(contract: string, name: string): ChainEventRecord[] {
    return (this.stmt.eventsNamed.all(contract, name) as Row[]).map(eventFromRow);
  }

  deleteChainEvent(txHash: string, logIndex: number): void {
    this.stmt.deleteEvent.run(bytes32(txHash), logIndex);
  }

  deleteChainEventsBelow(blockNumber: number): number {
    return this.stmt.deleteEventsBelow.run(blockNumber).changes;
  }
}

function prepare(db: Database) {
  const p = (sql: string): Statement => db.prepare(sql);
  return {
    deleteBlocksAbove: p("DELETE FROM chain_blocks WHERE block_number > ?"),
    deleteBlocksBelow: p("DELETE FROM chain_blocks WHERE block_number < ?"),
    deleteCursor: p("DELETE FROM chain_cursor WHERE id = 1"),
    deleteEvent: p("DELETE FROM chain_events WHERE tx_hash = ? AND log_index = ?"),
    deleteEventsBelow: p("DELETE FROM chain_events WHERE block_number < ?"),
    eventsNamed: p(
      "SELECT * FROM chain_events WHERE contract = ? AND name = ? ORDER BY block_number, log_index",
    ),
    eventsAbove: p(
      "SELECT * FROM chain_events WHERE block_number > ? ORDER BY block_number DESC, log_index DESC",
    ),
    getCursor: p("SELECT * FROM chain_cursor WHERE id = 1"),
    getEvent: p("SELECT * FROM chain_events WHERE tx_hash = ? AND log_index = ?"),
    insertEvent: p(
      `INSERT INTO chain_events (tx_hash, log_index, block_number, block_hash, block_timestamp, contract, name,
         args, undo, applied_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    listBlocks: p("SELECT * FROM chain_blocks WHERE block_number <= ? ORDER BY block_number DESC LIMIT ?"),
    putBlock: p(
      `INSERT INTO chain_blocks (block_number, block_hash, block_timestamp) VALUES (?, ?, ?)
       ON CONFLICT (block_number) DO UPDATE SET block_hash = excluded.block_hash,
         block_timestamp = excluded.block_timestamp`,
    ),
    putCursor: p(
      `INSERT INTO chain_cursor (id, block_number, block_hash, block_timestamp, updated_at) VALUES (1, ?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET block_number = excluded.block_number, block_hash = excluded.block_hash,
         block_timestamp = excluded.block_timestamp, updated_at = excluded.updated_at`,
    ),
  };
}

function eventFromRow(row: Row): ChainEventRecord {
  return {
    txHash: row.tx_hash as string,
    logIndex: row.log_index as number,
    blockNumber: row.block_number as number,
    blockHash: row.block_hash as string,
    blockTimestamp: row.block_timestamp as number,
    contract: row.contract as string,
    name: row.name as string,
    args: JSON.parse(row.args as string) as Record<string, unknown>,
    undo: JSON.parse(row.undo as string) as unknown[],
    appliedAt: row.applied_at as number,
  };
}
