/**
 * Payers' registered signing keys (docs/protocol.md "Payer signatures", docs/contracts.md "Payer signatures
 * on chain"). A contract wallet cannot sign with ECDSA itself, and its ERC-1271 answer could change after Core
 * accepted a signature, so it registers an EOA key in the Vault (`Vault.setGuaranteeSigner(key)`, called by
 * the wallet). On chain a signature that does not recover to the payer is checked against the key the payer
 * registered for the guarantee's `timestamp` (`Vault.guaranteeSignerAt`): the first key signs every timestamp
 * at once; a change signs only timestamps from `block.timestamp + withdrawalGracePeriod` on, and earlier
 * guarantees keep their key for good.
 *
 * {@link checkRegisteredSigner} is the rule Core's issuance and the facilitator's `/verify` apply to such a
 * signature, given `Vault.guaranteeSigner(payer)` (the latest registration) read at a block: it accepts only
 * what the Vault will accept for ever after, and it is stricter than the chain in two ways that protect the
 * payer: nothing while a change is pending (the wallet's brake on a leaked key), and only the latest key.
 * Pure: the chain's answer and times are given.
 */
import type { GuaranteeClaims } from "./claims";
import { sameAddress } from "./wire";

/** `Vault.guaranteeSigner(payer)`: the latest key the payer registered and the claims timestamp it signs from. */
export interface RegisteredSigningKey {
  /** The key's address. */
  key: string;
  /** Claims timestamps from this one on are signed by `key` (0: the first key, every timestamp). */
  effectiveFrom: number;
}

export const SIGNING_KEY_REASONS = {
  /** Not signed by the payer, nor by the payer's registered key (or the payer has none). */
  signerMismatch: "signer_mismatch",
  /** The payer's latest key change is not in effect yet: nothing is accepted for it until then. */
  changePending: "signing_key_change_pending",
  /** The timestamp is so far ahead that a change not seen yet could reach it. */
  timestampInFuture: "timestamp_in_future",
} as const;

export type SigningKeyReason = (typeof SIGNING_KEY_REASONS)[keyof typeof SIGNING_KEY_REASONS];

export interface SigningKeyProblem {
  reason: SigningKeyReason;
  message: string;
}

export interface SigningKeyChain {
  /** The time of the block `registered` was read at (Core: the newest block it indexed). */
  now: number;
  /**
   * The Vault's `withdrawalGracePeriod` (the smallest in force or scheduled), the delay of a key change; null:
   * unknown (the timestamp bound is not checked; Core always knows it).
   */
  gracePeriod: number | null;
}

/**
 * Whether the signature of `claims`, which recovers to `recovered` (not the payer), is the payer's through
 * its registered key `registered` (null: none), read at a block of time `chain.now`. Null when accepted.
 *
 * Accepted only if: the payer registered a key; no change is pending (`effectiveFrom <= now`); `recovered` is
 * that key; the claims' timestamp is from `effectiveFrom` on (the Vault checks earlier timestamps against the
 * earlier key); and it is before `now + gracePeriod`. The last rule is what makes the acceptance final: a
 * change registered after the block that was read lands at a time `>= now` and reaches only timestamps
 * `>= now + gracePeriod`, so the key the Vault checks this guarantee against can never change afterwards.
 */
export function checkRegisteredSigner(
  claims: GuaranteeClaims,
  recovered: string,
  registered: RegisteredSigningKey | null,
  chain: SigningKeyChain,
): SigningKeyProblem | null {
  const payer = claims.user;
  const R = SIGNING_KEY_REASONS;
  if (registered === null || /^0x0{40}$/i.test(registered.key)) {
    return {
      reason: R.signerMismatch,
      message:
        `signature: does not recover to user_address ${payer} (made by ${recovered}), which has no guarantee ` +
        "signing key registered in the Vault (a contract wallet registers its EOA key with Vault.setGuaranteeSigner)",
    };
  }
  if (registered.effectiveFrom > chain.now) {
    return {
      reason: R.changePending,
      message:
        `user_address ${payer} changes its guarantee signing key to ${registered.key}, in effect for claims ` +
        `timestamped ${registered.effectiveFrom} or later (Vault.setGuaranteeSigner); nothing is accepted for it ` +
        `until then (chain time ${chain.now})`,
    };
  }
  if (!sameAddress(recovered, registered.key)) {
    return {
      reason: R.signerMismatch,
      message:
        `signature: made by ${recovered}, neither user_address ${payer} nor its registered guarantee signing ` +
        `key ${registered.key}`,
    };
  }
  if (claims.timestamp < registered.effectiveFrom) {
    return {
      reason: R.signerMismatch,
      message:
        `claims.timestamp: ${claims.timestamp} is before ${registered.effectiveFrom}, when ${payer}'s signing key ` +
        `${registered.key} took effect (the Vault checks it against the earlier key); sign with a current timestamp`,
    };
  }
  if (chain.gracePeriod !== null && claims.timestamp >= chain.now + chain.gracePeriod) {
    return {
      reason: R.timestampInFuture,
      message:
        `claims.timestamp: ${claims.timestamp} is a withdrawal grace period (${chain.gracePeriod} s) or more ` +
        `past the chain's time ${chain.now}: a signing key change not seen yet could reach it`,
    };
  }
  return null;
}
