/** Helpers shared by the SQLite repositories. */
import { getAddress } from "ethers";
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

/** Checksumming costs a keccak256; the same few addresses (payers, recipients, assets) recur constantly. */
const CHECKSUM_MEMO_LIMIT = 10_000;
const checksummed = new Map<string, string>();

/** Keys compare as strings: normalise every address to its checksummed form first. */
export function address(value: string): string {
  let result = checksummed.get(value);
  if (result === undefined) {
    result = getAddress(value.toLowerCase());
    if (checksummed.size >= CHECKSUM_MEMO_LIMIT) checksummed.clear();
    checksummed.set(value, result);
  }
  return result;
}

export const bytes32 = (value: string): string => value.toLowerCase();

export function nonNegative(value: bigint, what: string): bigint {
  if (value < 0n) throw new RangeError(`${what} must not be negative, got ${value}`);
  return value;
}

export function positive(value: bigint, what: string): bigint {
  if (value <= 0n) throw new RangeError(`${what} must be positive, got ${value}`);
  return value;
}

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
