/**
 * Worker thread for store.test.ts: hammers lockIfAvailable on its own
 * connection to a shared SQLite file, then reports the total it was granted.
 */
import { parentPort, workerData } from "node:worker_threads";
import { SqliteStore } from "../../operator/store";

interface LockWorkerData {
  file: string;
  user: string;
  asset: string;
  amount: string;
  attempts: number;
}

async function run(data: LockWorkerData): Promise<void> {
  const store = SqliteStore.open(data.file);
  const amount = BigInt(data.amount);
  let granted = 0n;
  try {
    for (let i = 0; i < data.attempts; i++) {
      const result = await store.collateral.lockIfAvailable(
        data.user,
        data.asset,
        amount,
        (b) => b.deposited,
        0,
      );
      if (result.locked) granted += amount;
    }
  } finally {
    await store.close();
  }
  parentPort?.postMessage(granted.toString());
}

if (parentPort) {
  run(workerData as LockWorkerData).catch((error: unknown) => {
    // Surfaces as the worker's "error" event in the test.
    throw error;
  });
}
