/**
 * The certificate check the page runs in the browser (docs/console.md): the BLS signature (G1, tag
 * CERTIFICATE_DST) over the certificate's raw claims bytes against Core's public key from the public
 * params (G2), with sdk/bls-verify.ts (@noble/curves, loaded on first use: the main bundle stays small),
 * and the signed claims compared with the guarantee Core shows (docs/protocol.md, "Certificates": the
 * layout is `abi.encode(version, domain, guaranteeId, user, recipient, reqId, amount, asset, timestamp,
 * policy)`).
 */
import type { GuaranteeBody } from "./api";

export interface CertificateCheck {
  ok: boolean;
  lines: string[];
}

function bytesOf(hex: string): Uint8Array | null {
  if (!/^0x([0-9a-fA-F]{2})*$/.test(hex)) return null;
  const out = new Uint8Array((hex.length - 2) / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(2 + 2 * i, 4 + 2 * i), 16);
  return out;
}

const word = (claims: Uint8Array, index: number) =>
  Array.from(claims.subarray(32 * index, 32 * index + 32), (b) => b.toString(16).padStart(2, "0")).join("");
const asUint = (claims: Uint8Array, index: number) => BigInt(`0x${word(claims, index)}`);
const asAddress = (claims: Uint8Array, index: number) => `0x${word(claims, index).slice(24)}`;

export async function checkCertificate(g: GuaranteeBody, publicKey: number[]): Promise<CertificateCheck> {
  const { verifyCertificateSignature } = await import("../../sdk/bls-verify");
  const claims = bytesOf(g.certificate.claims);
  const signature = bytesOf(g.certificate.signature);
  if (!claims || !signature || claims.length < 32 * 10) {
    return { ok: false, lines: ["The certificate is not well-formed hex of the documented layout."] };
  }
  const signed = verifyCertificateSignature(Uint8Array.from(publicKey), claims, signature);
  const c = g.claims;
  const mismatches: string[] = [];
  const expect = (what: string, actual: string | bigint, wanted: string | bigint) => {
    if (String(actual).toLowerCase() !== String(wanted).toLowerCase()) mismatches.push(what);
  };
  expect("version", asUint(claims, 0), BigInt(c.version));
  expect("guarantee id", `0x${word(claims, 2)}`, g.guarantee_id);
  expect("payer", asAddress(claims, 3), c.user_address);
  expect("recipient", asAddress(claims, 4), c.recipient_address);
  expect("request id", asUint(claims, 5), BigInt(c.req_id));
  expect("amount", asUint(claims, 6), BigInt(c.amount));
  expect("asset", asAddress(claims, 7), c.asset_address);
  expect("timestamp", asUint(claims, 8), BigInt(c.timestamp));
  const lines = [
    signed
      ? "BLS signature valid: checked in this browser against Core's public key (public params)."
      : "BLS signature INVALID against Core's public key: do not rely on this certificate.",
    mismatches.length === 0
      ? "The signed claims are this guarantee's (id, payer, recipient, request id, amount, asset, time)."
      : `The signed claims differ from the guarantee shown in: ${mismatches.join(", ")}.`,
  ];
  return { ok: signed && mismatches.length === 0, lines };
}
