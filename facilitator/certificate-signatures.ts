/**
 * The BLS check of Core's certificates, shared by the settlements in flight: each settlement asks for its
 * own certificate's check and waits for its own answer, and the checks asked for in one turn of the event
 * loop (Core answers a group commit's guarantees together) are verified in one pairing equation
 * (sdk/bls.ts `blsVerifyBatch`: random coefficients, each signature decoded and checked to be in G1, and
 * one by one when the equation fails, so an invalid certificate is refused as before and never makes a
 * valid one fail). Nothing is skipped or deferred past the answer: a seller still gets `success: true` only
 * for a certificate whose signature verified. One at a time (sequential settlements) it is a plain
 * verification one `setImmediate` later. docs/benchmarks.md, "A paid request, hop by hop", third round.
 */
import { blsVerifyBatch } from "../sdk/bls";

/** Whether `signature` is `publicKey`'s BLS signature over `message` (the certificate's claims bytes). */
export type CertificateSignatureCheck = (
  publicKey: Uint8Array,
  message: Uint8Array,
  signature: Uint8Array,
) => Promise<boolean>;

interface Pending {
  publicKey: Uint8Array;
  message: Uint8Array;
  signature: Uint8Array;
  resolve: (valid: boolean) => void;
  reject: (error: unknown) => void;
}

/** A check that batches what is asked in one event-loop turn (per public key). */
export function batchedCertificateSignatureCheck(): CertificateSignatureCheck {
  let pending: Pending[] = [];
  const flush = () => {
    const batch = pending;
    pending = [];
    const byKey = new Map<string, Pending[]>();
    for (const item of batch) {
      const key = Buffer.from(item.publicKey).toString("hex");
      const group = byKey.get(key);
      if (group === undefined) byKey.set(key, [item]);
      else group.push(item);
    }
    for (const group of byKey.values()) {
      try {
        const valid = blsVerifyBatch(
          group[0].publicKey,
          group.map((item) => item.message),
          group.map((item) => item.signature),
        );
        group.forEach((item, i) => item.resolve(valid[i]));
      } catch (error) {
        for (const item of group) item.reject(error);
      }
    }
  };
  return (publicKey, message, signature) =>
    new Promise<boolean>((resolve, reject) => {
      if (pending.length === 0) setImmediate(flush);
      pending.push({ publicKey, message, signature, resolve, reject });
    });
}

/** The facilitator's one check (every settlement of the process shares its batches). */
export const certificateSignatureValid: CertificateSignatureCheck = batchedCertificateSignatureCheck();
