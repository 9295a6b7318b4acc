/**
 * A guarantee's leaf in its cycle's guarantees root (sdk/guarantee-tree.ts), computed once when the guarantee
 * is stored (column `leaf_hash`; docs/clearing.md "Netting in the database"): every field it covers is
 * immutable. A clearing value: the store calls this, it does not define it.
 */
import { GuaranteeLeafHasher } from "../../sdk/guarantee-tree";
import { fastKeccak256 } from "./native-keccak";

const leafHasher = new GuaranteeLeafHasher(fastKeccak256);

/** The fields of a guarantee its leaf covers. */
export interface LeafFields {
  guaranteeId: string;
  user: string;
  recipient: string;
  asset: string;
  amount: bigint;
  signature: string;
}

/**
 * The leaf hash, or null when a field is not well-formed hex (the cycle's plan then hashes the row's fields
 * itself and refuses it exactly as before the column existed).
 */
export function storedLeafHash(record: LeafFields): Buffer | null {
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
