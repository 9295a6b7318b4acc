/** Sellers' on-chain reserves (docs/contracts.md, "Seller's reserve"), as the indexer sees them. */
import type { GuaranteeState } from "./guarantees";

/**
 * A seller's reserve the Vault holds (Vault.registerReserve; docs/contracts.md, "Seller's reserve"): indexed
 * from ReserveRegistered, removed on ReserveReleased. An expired reserve still holds until someone calls
 * `releaseReserve`, as on chain.
 */
export interface ReserveRecord {
  /** 0x-prefixed 32-byte id, lower case. */
  guaranteeId: string;
  user: string;
  asset: string;
  recipient: string;
  amount: bigint;
  /**
   * V2: unix seconds from which `releaseReserve` may free it (validation deadline + withdrawal grace).
   * V1: its `collectableAt`, from which the recipient may collect it unless Core cleared the guarantee.
   */
  expiresAt: number;
  /**
   * A V1 reserve (`V1ReserveRegistered`): it never expires (`releaseReserve` reverts until the guarantee is
   * consumed); Core lists its id in the commit's `nettedV2Ids`. Absent means V2.
   */
  v1?: boolean;
  /** The registration (lower case hash) and its block. */
  txHash: string;
  blockNumber: number;
}

/** An active reserve with what Core itself locks for the guarantee it backs (capacity.ts takes the max). */
export interface ActiveReserve extends ReserveRecord {
  /** The guarantee as Core holds it, or null if Core has no guarantee under that id. */
  guarantee: { state: GuaranteeState; user: string; asset: string; amount: bigint } | null;
}

export interface ReserveRepository {
  /** Inserts or replaces the reserve of `record.guaranteeId`. */
  putReserve(record: ReserveRecord): Promise<void>;
  getReserve(guaranteeId: string): Promise<ReserveRecord | null>;
  deleteReserve(guaranteeId: string): Promise<void>;
  /** `user`'s active reserves (in `asset` only, when given) with the guarantees they back, oldest first. */
  listReserves(user: string, asset?: string): Promise<ActiveReserve[]>;
  /**
   * Reserves `Vault.releaseReserve` would free, oldest first, at most `limit`: V2 ones expired at chain time
   * `nowSeconds` (`expiresAt <= nowSeconds`), or any backing a guarantee Core holds as netted or remunerated.
   */
  listReleasableReserves(nowSeconds: number, limit: number): Promise<ActiveReserve[]>;
  /** Ids (lower case) of every V1 reserve the Vault holds, oldest first. */
  listV1ReserveIds(): Promise<string[]>;
}
