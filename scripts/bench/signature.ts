/**
 * Micro-benchmark of payer-signature verification (docs/protocol.md, "Payer signatures"):
 * ethers' generic path against the hot path of sdk/eip712.ts; and of certificate signing
 * (docs/protocol.md, "Certificates"): Core's G1 signer (native/blst-minsig) against the G2 signer it
 * replaced (@chainsafe/blst, min-pk) and the pure-JS fallback (@noble/curves), on 640-byte claims.
 *
 *   npx ts-node scripts/bench/signature.ts [opsPerRun] [runs]
 *
 * Each row is the median over `runs` runs of the mean time per operation within a run.
 */
import { SecretKey, Signature, verify as blstVerifyG2 } from "@chainsafe/blst";
import { bls12_381 } from "@noble/curves/bls12-381.js";
import { TypedDataEncoder, Wallet, keccak256, toUtf8Bytes, verifyTypedData } from "ethers";
import { CERTIFICATE_DST, blsBackend, blsKeyFromSecret, blsVerify, createBlsSigner } from "../../sdk/bls";
import type { GuaranteeClaims, GuaranteeClaimsV2, SigningScheme } from "../../sdk/claims";
import {
  GuaranteeHasher,
  guaranteeDigest,
  guaranteeTypedDataMessage,
  guaranteeTypedDataTypes,
  recoverGuaranteeSigner,
  signGuarantee,
  verifyGuaranteeSignature,
} from "../../sdk/eip712";
import { median } from "./stats";

const OPS_PER_RUN = Number(process.argv[2] ?? 500);
const RUNS = Number(process.argv[3] ?? 7);
const WARMUP_OPS = 200;

interface Row {
  name: string;
  msPerOp: number;
}

/** The pure-JS BLS rows run this many ops per run (≈ 130 signatures/s). */
const SLOW_OPS_PER_RUN = 20;

/** Runs `op(i)` for every i; the result is accumulated so that the JIT cannot drop the work. */
function bench(name: string, op: (i: number) => unknown, opsPerRun = OPS_PER_RUN): Row {
  let sink = 0;
  for (let i = 0; i < Math.min(WARMUP_OPS, opsPerRun); i++) sink += String(op(i)).length;
  const perRun: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < opsPerRun; i++) sink += String(op(i)).length;
    perRun.push(Number(process.hrtime.bigint() - start) / 1e6 / opsPerRun);
  }
  if (sink < 0) console.log(sink);
  return { name, msPerOp: median(perRun) };
}

async function main(): Promise<void> {
  const payer = new Wallet("0x" + "11".repeat(32));
  const domain = {
    name: "Surety",
    version: "1",
    chainId: 31337,
    verifyingContract: "0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0",
  };
  const claims: GuaranteeClaimsV2 = {
    version: 2,
    user: payer.address,
    recipient: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
    reqId: 42n,
    amount: 1_000_000n,
    asset: "0x5FbDB2315678afecb367f032d93F642f64180aa3",
    timestamp: 1_700_000_000,
    policy: {
      registry: "0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512",
      validator: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",
      agentId: 7n,
      minScore: 80,
      jobHash: keccak256(toUtf8Bytes("job-1")),
      tag: "quality",
      deadline: 1_700_003_600,
    },
  };
  const { policy: _policy, ...v1Fields } = claims;
  const claimsV1: GuaranteeClaims = { ...v1Fields, version: 1 };

  const hasher = new GuaranteeHasher(domain);
  const rows: Row[] = [];
  for (const [label, c] of [
    ["V1", claimsV1],
    ["V2", claims],
  ] as const) {
    const types = guaranteeTypedDataTypes(c.version);
    const message = guaranteeTypedDataMessage(c);
    const signatures: Record<SigningScheme, string> = {
      eip712: await signGuarantee(payer, hasher, c, "eip712"),
      eip191: await signGuarantee(payer, hasher, c, "eip191"),
    };
    // Distinct reqIds per iteration, so that no layer can serve a cached answer.
    const variants = Array.from({ length: 64 }, (_, i) => ({ ...c, reqId: BigInt(i) }));
    rows.push(
      bench(
        `${label} ethers TypedDataEncoder.hash`,
        (i) => TypedDataEncoder.hash(domain, types, message) + i,
      ),
    );
    rows.push(bench(`${label} guaranteeDigest (hasher)`, (i) => hasher.digest(variants[i & 63])));
    rows.push(
      bench(`${label} guaranteeDigest (plain domain)`, (i) => guaranteeDigest(domain, variants[i & 63])),
    );
    rows.push(
      bench(`${label} ethers verifyTypedData`, () =>
        verifyTypedData(domain, types, message, signatures.eip712),
      ),
    );
    for (const scheme of ["eip712", "eip191"] as const) {
      rows.push(
        bench(`${label} recoverGuaranteeSigner ${scheme} (native)`, () =>
          recoverGuaranteeSigner(hasher, c, signatures[scheme], scheme),
        ),
      );
      rows.push(
        bench(`${label} verifyGuaranteeSignature ${scheme} (native)`, () =>
          verifyGuaranteeSignature(hasher, c, signatures[scheme], scheme),
        ),
      );
    }
  }

  rows.push(...blsRows());

  const width = Math.max(...rows.map((row) => row.name.length));
  console.log(`Node ${process.version}; ${RUNS} runs × ${OPS_PER_RUN} ops; median ms/op`);
  console.log(`${"operation".padEnd(width)}  ${"ms/op".padStart(8)}  ${"ops/s".padStart(9)}`);
  for (const row of rows) {
    const perSecond = Math.round(1000 / row.msPerOp).toLocaleString("en-US");
    console.log(`${row.name.padEnd(width)}  ${row.msPerOp.toFixed(4).padStart(8)}  ${perSecond.padStart(9)}`);
  }
}

/** Certificate signatures over 64 distinct 640-byte claims (the size of a V2 certificate's claims). */
function blsRows(): Row[] {
  const keys = blsKeyFromSecret("0x" + "42".repeat(32));
  const messages = Array.from({ length: 64 }, (_, i) =>
    Uint8Array.from({ length: 640 }, (_, j) => (i * 251 + j * 7) & 0xff),
  );
  const signer = createBlsSigner(keys.secretKey);
  const g1Signatures = messages.map((message) => signer.sign(message));
  const g2Key = SecretKey.fromBytes(keys.secretKey);
  const g2PublicKey = g2Key.toPublicKey();
  const g2Signatures = messages.map((message) => g2Key.sign(message));
  const short = bls12_381.shortSignatures;
  const dst = new TextEncoder().encode(CERTIFICATE_DST);
  return [
    bench(`BLS sign G1 (${blsBackend()}: native/blst-minsig, Core's signer)`, (i) =>
      signer.sign(messages[i & 63]),
    ),
    bench("BLS sign G2 (@chainsafe/blst min-pk, Core's signer before issue 15)", (i) =>
      g2Key.sign(messages[i & 63]).toBytes(true),
    ),
    bench(
      "BLS sign G1 (@noble/curves shortSignatures, the fallback)",
      (i) => short.sign(short.hash(messages[i & 63], dst), keys.secretKey).toBytes(true),
      SLOW_OPS_PER_RUN,
    ),
    bench(`BLS verify G1 (${blsBackend()}, sdk blsVerify)`, (i) =>
      blsVerify(keys.publicKey, messages[i & 63], g1Signatures[i & 63]),
    ),
    bench("BLS verify G2 (@chainsafe/blst, before issue 15)", (i) =>
      blstVerifyG2(
        messages[i & 63],
        g2PublicKey,
        Signature.fromBytes(g2Signatures[i & 63].toBytes(true)),
        true,
        true,
      ),
    ),
  ];
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
