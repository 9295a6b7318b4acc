/**
 * The store's share of issuance, alone (docs/benchmarks.md, "The store written once, phase 2"):
 * `issueGuarantees` on an in-memory SQLite store, batches of BATCH over 50 payers, N guarantees per round,
 * 4 rounds (the first a warm-up); prints the median CPU µs per guarantee (user + system, all threads).
 *   BATCH=32 N=6000 npx ts-node --transpile-only scripts/bench/store-issuance.ts
 */
import { Wallet } from "ethers";
import type { CollateralBalance, GuaranteeRecord } from "../../operator/store";
import { SqliteStore } from "../../operator/store/sqlite-store";

const BATCH = Number(process.env.BATCH ?? 32);
const N = Number(process.env.N ?? 6000);
const PAYERS = 50;
const ASSET = "0x0000000000000000000000000000000000000000";
const RECIPIENT = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC";
const T0 = 1_750_000_000;
const full = (b: CollateralBalance) => b.deposited - b.pendingWithdrawal;

let issued = 0;
function record(user: string): GuaranteeRecord {
  issued++;
  return {
    guaranteeId: "0x" + issued.toString(16).padStart(64, "0"),
    version: 1,
    user,
    recipient: RECIPIENT,
    reqId: BigInt(issued),
    amount: 1n,
    asset: ASSET,
    timestamp: T0,
    policy: null,
    scheme: "eip712",
    signature: "0x" + "11".repeat(65),
    certificateClaims: "0x1234",
    certificateSignature: "0x" + "22".repeat(96),
    state: "FINALIZED_PAYABLE",
    createdAt: T0,
  };
}

async function main(): Promise<void> {
  const users = Array.from({ length: PAYERS }, () => Wallet.createRandom().address);
  const store = SqliteStore.open(":memory:");
  for (const user of users) await store.collateral.creditDeposit(user, ASSET, 10n ** 30n, T0);
  const rounds: number[] = [];
  for (let round = 0; round < 4; round++) {
    const start = process.cpuUsage();
    for (let i = 0; i < N / BATCH; i++) {
      const requests = Array.from({ length: BATCH }, (_, j) => ({
        record: record(users[(i * BATCH + j) % PAYERS]),
        capacity: full,
      }));
      const outcomes = await store.issuance.issueGuarantees(requests, T0);
      if (outcomes.some((o) => o.kind !== "issued")) throw new Error("a guarantee was not issued");
    }
    const used = process.cpuUsage(start);
    if (round > 0) rounds.push((used.user + used.system) / N);
  }
  await store.close();
  rounds.sort((a, b) => a - b);
  console.log(
    `batch ${BATCH}: ${rounds[1].toFixed(2)} µs CPU per guarantee (rounds ${rounds.map((r) => r.toFixed(2)).join(", ")})`,
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
