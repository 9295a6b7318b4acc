/**
 * Core's certificate in a dispute answer, under the Vault's current operator key (audit M-3, docs/clearing.md
 * "Operator key gaps"). The chain checks an answered guarantee's certificate against the key the Vault holds
 * now, while the store holds the certificate signed at issuance: after a routine rotation it no longer
 * verifies (`InvalidCertificateSignature`). The keeper therefore re-signs the stored claims with Core's
 * current signer (the claims bytes are the message; BLS signatures are deterministic, so under an unchanged
 * key this is the stored certificate), after checking that Core's key is the Vault's: when it is not (a key
 * revoked, a rotation executed before Core was restarted with the new secret) no answer can verify, and the
 * keeper waits and says so instead of conceding.
 */
import { getBytes, hexlify } from "ethers";
import { type BlsSigner, signatureToEip2537 } from "../../sdk/bls";
import type { VaultOperatorKey } from "../chain/gateway";
import type { DisputeAnswerArg } from "./dispute-answer";

/** Whether Core can certify answers now, read once per keeper tick. */
export type CertifierStatus =
  | { kind: "ready"; recertify(answer: DisputeAnswerArg): DisputeAnswerArg }
  | { kind: "vault_key_not_set" }
  | { kind: "other_key"; vaultKey: string; coreKey: string }
  | { kind: "unreadable"; reason: string };

export interface AnswerCertifier {
  status(): Promise<CertifierStatus>;
}

export interface AnswerCertifierDeps {
  /** Core's certificate signer (SURETY_BLS_SECRET). */
  signer: BlsSigner;
  /** The Vault's operator key (ChainGateway.vaultOperatorKey of the deployment's Vault). */
  vaultKey(): Promise<VaultOperatorKey>;
}

/** `answer` with its certificate re-signed by `signer` (an empty answer, a concession, is left as it is). */
export function recertifyAnswer(answer: DisputeAnswerArg, signer: BlsSigner): DisputeAnswerArg {
  if (answer.claims === "0x") return answer;
  return { ...answer, certificate: signatureToEip2537(signer.sign(getBytes(answer.claims))) };
}

export function createAnswerCertifier(deps: AnswerCertifierDeps): AnswerCertifier {
  const coreKey = hexlify(deps.signer.publicKey);
  return {
    async status(): Promise<CertifierStatus> {
      let onChain: VaultOperatorKey;
      try {
        onChain = await deps.vaultKey();
      } catch (error) {
        return { kind: "unreadable", reason: (error as Error).message };
      }
      if (!onChain.set) return { kind: "vault_key_not_set" };
      const vaultKey = hexlify(onChain.publicKey);
      if (vaultKey !== coreKey) return { kind: "other_key", vaultKey, coreKey };
      return { kind: "ready", recertify: (answer) => recertifyAnswer(answer, deps.signer) };
    },
  };
}

/** What to tell the operator when answers cannot be certified now (null when they can). */
export function certifierProblem(status: CertifierStatus): string | null {
  switch (status.kind) {
    case "ready":
      return null;
    case "vault_key_not_set":
      return (
        "the Vault has no operator key (revoked): no answer verifies until the scheduled key is executed; " +
        "execute it (Vault.setOperatorKey) and restart Core with its secret (docs/clearing.md, Operator key gaps)"
      );
    case "other_key":
      return (
        `Core's BLS key ${status.coreKey} is not the Vault's operator key ${status.vaultKey}: restart Core with ` +
        "the secret of the Vault's key (SURETY_BLS_SECRET); answers wait until then"
      );
    case "unreadable":
      return `cannot read the Vault's operator key: ${status.reason}`;
  }
}
