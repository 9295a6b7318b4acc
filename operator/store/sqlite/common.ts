/** Helpers shared by the SQLite repositories. */
import { GuaranteeLeafHasher } from "../../../sdk/guarantee-tree";
import { fastKeccak256 } from "../../clearing/native-keccak";
import type { GuaranteeRecord, GuaranteeState, StoredGuarantee } from "../repositories";

/** The synchronous shape of an async interface. */
export type SyncOf<T> = {
  [K in keyof T]: T[K] extends (...args: infer A) => Promise<infer R> ? (...args: A) => R : never;
};

export type Row = Record<string, unknown>;

/** A `guarantees` row as SQLite returns it. */
export interface GuaranteeRow {
  guarantee_id: string;
  seq: number;
  version: number;
  user_address: string;
  recipient_address: string;
  req_id: string;
  amount: string;
  asset_address: string;
  timestamp: number;
  policy: string | null;
  scheme: string;
  signature: string;
  certificate_claims: string;
  certificate_signature: string;
  state: string;
  created_at: number;
  updated_at: number;
  cycle_id: number | null;
  excluded_reason: string | null;
  validation_request_hash: string | null;
}

export { address, bytes32, nonNegative, positive } from "../values";

export function guaranteeFromRow(row: GuaranteeRow): StoredGuarantee {
  return {
    guaranteeId: row.guarantee_id,
    version: row.version as 1 | 2,
    user: row.user_address,
    recipient: row.recipient_address,
    reqId: BigInt(row.req_id),
    amount: BigInt(row.amount),
    asset: row.asset_address,
    timestamp: row.timestamp,
    policy: row.policy === null ? null : (JSON.parse(row.policy) as Record<string, unknown>),
    scheme: row.scheme as GuaranteeRecord["scheme"],
    signature: row.signature,
    certificateClaims: row.certificate_claims,
    certificateSignature: row.certificate_signature,
    state: row.state as GuaranteeState,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    cycleId: row.cycle_id ?? null,
    excludedReason: row.excluded_reason ?? null,
  };
}

const leafHasher = new GuaranteeLeafHasher(fastKeccak256);

/**
 * The guarantee's leaf in its cycle's guarantees root (sdk/guarantee-tree.ts), computed once when the
 * guarantee is stored (column `leaf_hash`; docs/clearing.md "Netting in the database"): every field it
 * covers is immutable. Null when a field is not well-formed hex (the cycle's plan then hashes the row's
 * fields itself and refuses it exactly as before the column existed).
 */
export function storedLeafHash(record: GuaranteeRecord): Buffer | null {
  const hash = Buffer.allocUnsafe(32);
  try {
    leafHasher.hashInto(
      {
        guaranteeId: record.guaranteeId,
        payer: record.user,
        recipient: record.recipient,
        asset: record.asset,
        amount: record.amount,
        signature: record.signature,
      },
      hash,
      0,
    );
    return hash;
  } catch {
    return null;
  }
}
