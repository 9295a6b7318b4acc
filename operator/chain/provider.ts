import type { Provider } from "ethers";

/** The JSON-RPC surface the indexer and the clearing tasks need (ethers Provider; Hardhat's has it). */
export type ChainProvider = Pick<
  Provider,
  | "getBlockNumber"
  | "getBlock"
  | "getLogs"
  | "getTransactionReceipt"
  | "getTransactionCount"
  | "getTransaction"
  | "call"
  | "estimateGas"
  | "getFeeData"
  | "getNetwork"
  | "broadcastTransaction"
>;
