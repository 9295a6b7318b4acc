/**
 * Micro-benchmark of payer-signature verification (docs/protocol.md, "Payer signatures"):
 * ethers' generic path against the hot path of sdk/eip712.ts.
 *
 *   npx ts-node scripts/bench/signature.ts [opsPerRun] [runs]
 *
 * Each row is the median over `runs` runs of the mean time per operation within a run.
 */
import { TypedDataEncoder, Wallet, keccak256, toUtf8Bytes, verifyTypedData } from "ethers";
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

/** Runs `op(i)` for every i; the result is accumulated so that the JIT cannot drop the work. */
function bench(name: string, op: (i: number) => unknown): Row {
  let sink = 0;
  for (let i = 0; i < WARMUP_OPS; i++) sink += String(op(i)).length;
  const perRun: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < OPS_PER_RUN; i++) sink += String(op(i)).length;
    perRun.push(Number(process.hrtime.bigint() - start) / 1e6 / OPS_PER_RUN);
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

  const width = Math.max(...rows.map((row) => row.name.length));
  console.log(`Node ${process.version}; ${RUNS} runs × ${OPS_PER_RUN} ops; median ms/op`);
  console.log(`${"operation".padEnd(width)}  ${"ms/op".padStart(8)}  ${"ops/s".padStart(9)}`);
  for (const row of rows) {
    const perSecond = Math.round(1000 / row.msPerOp).toLocaleString("en-US");
    console.log(`${row.name.padEnd(width)}  ${row.msPerOp.toFixed(4).padStart(8)}  ${perSecond.padStart(9)}`);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
