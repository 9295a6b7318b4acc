/**
 * A decoded log as Core indexes it (chain/events.ts decodes and applies it; webhooks/events.ts turns
 * it into integrator events). Plain data, no imports, so either side can name it.
 */
export type ContractName = "Vault" | "ClearingHouse" | "ValidationRegistry";

export type EventValue = bigint | string | boolean | number | EventValue[] | { [key: string]: EventValue };

export interface ChainEvent {
  contract: ContractName;
  name: string;
  args: Record<string, EventValue>;
  txHash: string;
  logIndex: number;
  blockNumber: number;
  blockHash: string;
  blockTimestamp: number;
}
