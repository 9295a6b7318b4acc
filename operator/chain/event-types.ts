/**
 * A log as Core indexes it: where it is on chain ({@link ChainLogRef}, what webhooks/events.ts keys its
 * events on) and its plain form ({@link ChainEvent}: what the journal stores, chain_events.args). Plain data,
 * no imports, so either side can name it. The typed form handlers read is chain/typed-events.ts.
 */
export type ContractName = "Vault" | "ClearingHouse" | "ValidationRegistry";

export type EventValue = bigint | string | boolean | number | EventValue[] | { [key: string]: EventValue };

/** Where a log is: its transaction, index and block. */
export interface ChainLogRef {
  txHash: string;
  logIndex: number;
  blockNumber: number;
  blockHash: string;
  blockTimestamp: number;
}

/** A decoded log in plain form (arguments by name; what the journal keeps). */
export interface ChainEvent extends ChainLogRef {
  contract: ContractName;
  name: string;
  args: Record<string, EventValue>;
}
