/** A `guarantees` row and its mapping to the repositories' records, for both engines (sql/guarantees.ts). */
import type {
  ClearingGuarantee,
  GuaranteeRecord,
  GuaranteeState,
  StoredGuarantee,
  VerdictPin,
} from "../repositories";
import type { GuaranteesTable } from "./schema";

/** A `guarantees` row as either engine returns it (`ins_xid`: PostgreSQL, as text, where selected). */
export type GuaranteeRow = Omit<
  GuaranteesTable,
  | "seq"
  | "finalization_signature"
  | "verdict_pin"
  | "verdict_payable_at"
  | "verdict_pin_at"
  | "payable_seq"
  | "payable_xid"
  | "ins_xid"
> & {
  seq: number;
  finalization_signature?: string | null;
  verdict_pin?: string | null;
  verdict_payable_at?: number | null;
  verdict_pin_at?: number | null;
  payable_seq: number | null;
  ins_xid?: string;
};

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

export function clearingGuaranteeFromRow(row: GuaranteeRow): ClearingGuarantee {
  return {
    ...guaranteeFromRow(row),
    seq: row.seq,
    validationRequestHash: row.validation_request_hash ?? null,
    verdictPin: (row.verdict_pin ?? null) as VerdictPin | null,
    verdictPinAt: row.verdict_pin_at ?? null,
    verdictPayableAt: row.verdict_payable_at ?? null,
  };
}
