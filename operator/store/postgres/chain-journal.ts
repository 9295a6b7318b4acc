/** {@link ChainJournalRepository} on PostgreSQL. */
import type { ChainBlock, ChainCursor, ChainEventRecord, ChainJournalRepository } from "../repositories";
import { bytes32 } from "../sqlite/common";
import type { PgConn, Row } from "./common";

export class PgChainJournal implements ChainJournalRepository {
  constructor(private readonly db: PgConn) {}

  async getChainCursor(): Promise<ChainCursor | null> {
    const { rows } = await this.db.query("SELECT * FROM chain_cursor WHERE id = 1");
    const row = rows[0];
    if (!row) return null;
    return {
      blockNumber: row.block_number as number,
      blockHash: row.block_hash as string,
      blockTimestamp: row.block_timestamp as number,
    };
  }

  async setChainCursor(cursor: ChainCursor | null, now: number): Promise<void> {
    if (cursor === null) {
      await this.db.query("DELETE FROM chain_cursor WHERE id = 1");
      return;
    }
    await this.db.query(
      `INSERT INTO chain_cursor (id, block_number, block_hash, block_timestamp, updated_at) VALUES (1, $1, $2, $3, $4)
       ON CONFLICT (id) DO UPDATE SET block_number = excluded.block_number, block_hash = excluded.block_hash,
         block_timestamp = excluded.block_timestamp, updated_at = excluded.updated_at`,
      [cursor.blockNumber, bytes32(cursor.blockHash), cursor.blockTimestamp, now],
    );
  }

  async recordChainBlock(block: ChainBlock): Promise<void> {
    await this.db.query(
      `INSERT INTO chain_blocks (block_number, block_hash, block_timestamp) VALUES ($1, $2, $3)
       ON CONFLICT (block_number) DO UPDATE SET block_hash = excluded.block_hash,
         block_timestamp = excluded.block_timestamp`,
      [block.blockNumber, bytes32(block.blockHash), block.blockTimestamp],
    );
  }

  async listChainBlocks(atOrBelow: number, limit: number): Promise<ChainBlock[]> {
    const { rows } = await this.db.query(
      "SELECT * FROM chain_blocks WHERE block_number <= $1 ORDER BY block_number DESC LIMIT $2",
      [atOrBelow, limit],
    );
    return rows.map((row) => ({
      blockNumber: row.block_number as number,
      blockHash: row.block_hash as string,
      blockTimestamp: row.block_timestamp as number,
    }));
  }

  async deleteChainBlocks(above: number, pruneBelow?: number): Promise<void> {
    await this.db.query("DELETE FROM chain_blocks WHERE block_number > $1", [above]);
    if (pruneBelow !== undefined)
      await this.db.query("DELETE FROM chain_blocks WHERE block_number < $1", [pruneBelow]);
  }

  async getChainEvent(txHash: string, logIndex: number): Promise<ChainEventRecord | null> {
    const { rows } = await this.db.query("SELECT * FROM chain_events WHERE tx_hash = $1 AND log_index = $2", [
      bytes32(txHash),
      logIndex,
    ]);
    return rows[0] ? eventFromRow(rows[0]) : null;
  }

  async insertChainEvent(record: ChainEventRecord): Promise<void> {
    await this.db.query(
      `INSERT INTO chain_events (tx_hash, log_index, block_number, block_hash, block_timestamp, contract, name,
         args, undo, applied_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
      [
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
      ],
    );
  }

  async listChainEventsAbove(blockNumber: number): Promise<ChainEventRecord[]> {
    const { rows } = await this.db.query(
      "SELECT * FROM chain_events WHERE block_number > $1 ORDER BY block_number DESC, log_index DESC",
      [blockNumber],
    );
    return rows.map(eventFromRow);
  }

  async listChainEventsNamed(contract: string, name: string): Promise<ChainEventRecord[]> {
    const { rows } = await this.db.query(
      "SELECT * FROM chain_events WHERE contract = $1 AND name = $2 ORDER BY block_number, log_index",
      [contract, name],
    );
    return rows.map(eventFromRow);
  }

  async deleteChainEvent(txHash: string, logIndex: number): Promise<void> {
    await this.db.query("DELETE FROM chain_events WHERE tx_hash = $1 AND log_index = $2", [
      bytes32(txHash),
      logIndex,
    ]);
  }

  async deleteChainEventsBelow(blockNumber: number): Promise<number> {
    return (await this.db.query("DELETE FROM chain_events WHERE block_number < $1", [blockNumber])).rowCount;
  }
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
