/** Helpers shared by the SQLite repositories. */
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
  finalization_signature?: string | null;
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
    finalizationSignature: row.finalization_signature ?? null,
  };
}
