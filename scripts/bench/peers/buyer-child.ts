/**
 * `bench:paid-request`'s throughput buyers, in a process of their own so that their CPU (the buyer's
 * `@x402/fetch` and signing) is measured apart from the seller's: `BENCH_CONCURRENCY` loops paying `GET
 * <url>` through `@x402/fetch` + `SuretyClientScheme` for `BENCH_DURATION_MS`. Input: JSON in argv[2]
 * (`url`, `network`, `domain` public params, `privateKey`, `price`, `concurrency`, `durationMs`). Output: one
 * line `RESULT {…}` (paid, failed, wall ms, this process's CPU ms, and the signing of one payment in ms,
 * measured apart after the loops). The no-op schemes (noop-scheme.ts) are registered too.
 */
import type { Network } from "@x402/core/types";
import { wrapFetchWithPaymentFromConfig } from "@x402/fetch";
import { Wallet } from "ethers";
import { SuretyClientScheme, domainFromPublicParams } from "../../../sdk/kits/x402-scheme";
import { ZERO_ADDRESS } from "../../../sdk/wire";
import { NOOP_HTTP_SCHEME, NOOP_SCHEME, NoopClientScheme } from "./noop-scheme";

interface Input {
  url: string;
  network: Network;
  publicParams: unknown;
  privateKey: string;
  price: string;
  concurrency: number;
  durationMs: number;
}

async function main(): Promise<void> {
  const input = JSON.parse(process.argv[2]) as Input;
  const scheme = new SuretyClientScheme({
    signer: new Wallet(input.privateKey),
    domain: domainFromPublicParams(input.publicParams),
    maxAmountPerRequest: { [ZERO_ADDRESS]: BigInt(input.price) },
  });
  let requirements: Parameters<SuretyClientScheme["createPaymentPayload"]>[1] | null = null;
  const create = scheme.createPaymentPayload.bind(scheme);
  scheme.createPaymentPayload = async (...args: Parameters<typeof create>) => {
    requirements ??= args[1];
    return create(...args);
  };
  const pay = wrapFetchWithPaymentFromConfig(fetch, {
    schemes: [
      { network: input.network, client: scheme },
      { network: input.network, client: new NoopClientScheme(NOOP_SCHEME) },
      { network: input.network, client: new NoopClientScheme(NOOP_HTTP_SCHEME) },
    ],
    spendControls: scheme.spendControls(),
  });
  // Warm-up: one connection per loop, JIT.
  await Promise.all(
    Array.from({ length: input.concurrency }, async () => (await pay(input.url)).arrayBuffer()),
  );
  let paid = 0;
  let failed = 0;
  process.stdout.write("START\n");
  const cpu0 = process.cpuUsage();
  const start = performance.now();
  const end = start + input.durationMs;
  await Promise.all(
    Array.from({ length: input.concurrency }, async () => {
      while (performance.now() < end) {
        const response = await pay(input.url);
        await response.arrayBuffer();
        if (response.status === 200) paid++;
        else failed++;
      }
    }),
  );
  const wallMs = performance.now() - start;
  const cpu = process.cpuUsage(cpu0);
  // The buyer's signing per payment, measured apart (one at a time, so its wall time is its CPU): the payload
  // for the requirements the loops paid.
  let signMs = 0;
  if (requirements !== null) {
    const runs = 200;
    const t0 = performance.now();
    for (let i = 0; i < runs; i++) await create(2, requirements);
    signMs = (performance.now() - t0) / runs;
  }
  process.stdout.write(
    `RESULT ${JSON.stringify({ paid, failed, wallMs, signMs, cpuMs: (cpu.user + cpu.system) / 1000 })}\n`,
  );
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
