/**
 * `npm run bench:vs-peers` (also `bench:vs-exact`): x402 `exact`, x402 `batch-settlement` and Surety `svc-credit`
 * side by side: same chain, same seller app, same buyer loop, one run.
 *
 * Setup (all real, all on this machine):
 *   - the devnet (`scripts/devnet.ts` as a child process on free ports: a Hardhat node, the contracts,
 *     Core and Surety's facilitator);
 *   - an EIP-3009 token (`contracts/test/Eip3009Token.sol`) deployed on that chain, minted to the buyer;
 *   - the official x402 `exact` facilitator (`@x402/core`'s `x402Facilitator` + `@x402/evm`'s exact
 *     scheme, a viem signer over the node's RPC) served over HTTP in this process: it settles with
 *     `transferWithAuthorization` and waits for the receipt;
 *   - the official x402 `batch-settlement` facilitator (`@x402/evm` 2.27) served over HTTP in this process,
 *     against the FROM-SPEC escrow of contracts/test/batch-settlement/ (benchmarking only: the npm package does
 *     not ship the official contract's bytecode) placed at the canonical addresses (scripts/bench/peers/);
 *   - one seller on `@x402/express`: `GET /exact`, `GET /batch` (batch-settlement, the token, the official
 *     server scheme checking vouchers itself), `GET /surety` (svc-credit, ETH collateral the buyer deposited in
 *     the Vault) and `GET /free` (the same handler, unpaid), one `x402ResourceServer` with the three facilitators;
 *   - one buyer: `@x402/fetch` with the three client schemes, `BENCH_CONCURRENCY` loops paying as fast as
 *     they can for `BENCH_DURATION` seconds. batch-settlement serialises requests per channel, so each loop
 *     has its own channel (salt = loop index), opened by its first request with a deposit of
 *     `BENCH_BATCH_DEPOSIT_PAYMENTS` × the price.
 *
 * Phases: (1) sequential latency on automine: one request at a time, `BENCH_SEQ_ROUNDS` rounds alternating
 * free / exact / batch / surety (`BENCH_SEQ_REQUESTS` each per round), the buyer's wall time per request, and the
 * added latency p50/p99 of each scheme over the unpaid route; (2) throughput for each mining mode (automine;
 * `BENCH_BLOCK_MS` interval mining, as on an L2), `BENCH_RUNS` alternating runs per scheme, medians; (3) gas:
 * exact on its settlement receipts; batch-settlement on its deposit receipts and on claims the official channel
 * manager sends (1 row per transaction, then every channel in one) and its settle; Surety's per-cycle gas
 * from test/contracts/gas.test.ts (run first) amortised over 1k and 100k guarantees per cycle.
 *
 * Environment: BENCH_DURATION (10 s), BENCH_CONCURRENCY (8), BENCH_RUNS (3), BENCH_BLOCK_MS (2000),
 * BENCH_SEQ_ROUNDS (5), BENCH_SEQ_REQUESTS (40), BENCH_BATCH_DEPOSIT_PAYMENTS (1000000),
 * BENCH_SKIP_GAS_TEST=1 (use docs/gas.md's figures instead of running the gas test).
 */
import { spawnSync } from "node:child_process";
import { createServer, type Server } from "node:http";
import { loadavg } from "node:os";
import { x402Facilitator } from "@x402/core/facilitator";
import {
  type FacilitatorClient,
  HTTPFacilitatorClient,
  type RoutesConfig,
  x402ResourceServer,
} from "@x402/core/server";
import type { Network, PaymentPayload, PaymentRequirements, SettleResponse } from "@x402/core/types";
import { toClientEvmSigner, toFacilitatorEvmSigner } from "@x402/evm";
import { BatchSettlementEvmScheme as BatchClientScheme } from "@x402/evm/batch-settlement/client";
import { BatchSettlementEvmScheme as BatchServerScheme } from "@x402/evm/batch-settlement/server";
import { ExactEvmScheme as ExactClientScheme } from "@x402/evm/exact/client";
import { registerExactEvmScheme } from "@x402/evm/exact/facilitator";
import { ExactEvmScheme as ExactServerScheme } from "@x402/evm/exact/server";
import { paymentMiddleware } from "@x402/express";
import { decodePaymentResponseHeader, wrapFetchWithPaymentFromConfig } from "@x402/fetch";
import { JsonRpcProvider, Wallet, parseEther } from "ethers";
import express from "express";
import { http, createPublicClient, createWalletClient, defineChain, publicActions } from "viem";
import { nonceManager, privateKeyToAccount } from "viem/accounts";
import { ZERO_ADDRESS } from "../../sdk/wire";
import {
  SCHEME,
  SuretyClientScheme,
  SuretyServerScheme,
  domainFromPublicParams,
  suretyPrice,
} from "../../sdk/kits/x402-scheme";
import { Eip3009Token__factory, Vault__factory } from "../../typechain-types";
import { devAccount } from "../devnet/accounts";
import { batchSettlementFacilitator, installBatchSettlementFromSpec } from "./peers/batch-settlement";
import { ROOT, close, listen, startDevnet, stopDevnet } from "./peers/devnet-child";
import { median, percentile } from "./stats";

const EXACT_PRICE = 1_000n; // token base units per request
const SURETY_PRICE = 1_000_000_000n; // wei per request (1 gwei)
const TOKEN_NAME = "Exact USD";
const TOKEN_VERSION = "2";
const BUYER_INDEX = 7;
const SELLER_INDEX = 8;
const EXACT_FACILITATOR_INDEX = 9;
const BATCH_FACILITATOR_INDEX = 10;
const BATCH_AUTHORIZER_INDEX = 11;
const BATCH_WITHDRAW_DELAY = 900;

function envInt(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  if (!/^[0-9]+$/.test(raw) || Number(raw) === 0) throw new Error(`${name}: must be a positive integer`);
  return Number(raw);
}

const DURATION_S = envInt("BENCH_DURATION", 10);
const CONCURRENCY = envInt("BENCH_CONCURRENCY", 8);
const RUNS = envInt("BENCH_RUNS", 3);
const BLOCK_MS = envInt("BENCH_BLOCK_MS", 2000);
const SEQ_ROUNDS = envInt("BENCH_SEQ_ROUNDS", 5);
const SEQ_REQUESTS = envInt("BENCH_SEQ_REQUESTS", 40);
const BATCH_DEPOSIT_PAYMENTS = envInt("BENCH_BATCH_DEPOSIT_PAYMENTS", 1_000_000);

/** Why the exact facilitator's transactions failed to send (reported with the results). */
const sendErrors = new Map<string, number>();

function shortError(error: unknown): string {
  const text =
    error instanceof Error
      ? ((error as { shortMessage?: string }).shortMessage ?? error.message)
      : String(error);
  return text.split("\n")[0].slice(0, 160);
}

function log(message: string): void {
  process.stdout.write(`[vs-peers] ${message}\n`);
}

// ---------------------------------------------------------------------------
// Timing facilitator client: the seller's view of /settle
// ---------------------------------------------------------------------------

class TimedFacilitatorClient extends HTTPFacilitatorClient {
  samples: { ms: number; transaction: string; success: boolean }[] = [];

  override async settle(payload: PaymentPayload, requirements: PaymentRequirements): Promise<SettleResponse> {
    const started = performance.now();
    const result = await super.settle(payload, requirements);
    this.samples.push({
      ms: performance.now() - started,
      transaction: result.transaction,
      success: result.success,
    });
    return result;
  }
}

// ---------------------------------------------------------------------------
// Gas figures of Surety's on-chain steps
// ---------------------------------------------------------------------------

interface SuretyGas {
  source: string;
  /** commitCycle gas = base + perDebtor · debtors (least squares over the measured cycles). */
  commitBase: number;
  commitPerDebtor: number;
  pay: number;
  /** claimNetCredit with an 8-leaf tree (3 proof hashes). */
  claim8: number;
  remunerate: number;
}

/** docs/gas.md's figures at the time this bench was written (used with BENCH_SKIP_GAS_TEST=1 or on a parse failure). */
const DOCUMENTED_GAS: SuretyGas = {
  source: "docs/gas.md figures (not re-measured)",
  commitBase: 151_000,
  commitPerDebtor: 53_000,
  pay: 89_343,
  claim8: 97_233,
  remunerate: 239_427,
};
/** Extra gas per Merkle proof level of claimNetCredit (docs/gas.md). */
const CLAIM_GAS_PER_LEVEL = 1_000;

function measureSuretyGas(): SuretyGas {
  if (process.env.BENCH_SKIP_GAS_TEST === "1") return DOCUMENTED_GAS;
  log("measuring Surety's per-item gas: test/contracts/gas.test.ts …");
  const run = spawnSync("npx", ["hardhat", "test", "--no-compile", "test/contracts/gas.test.ts"], {
    cwd: ROOT,
    encoding: "utf8",
    timeout: 600_000,
  });
  const rows = new Map<string, number>();
  for (const match of (run.stdout ?? "").matchAll(/\|\s*([^|]+?)\s*\|\s*([\d,]+)\s*\|/g)) {
    rows.set(match[1], Number(match[2].replace(/,/g, "")));
  }
  const find = (pattern: RegExp) => [...rows].find(([label]) => pattern.test(label))?.[1];
  const commits = [...rows]
    .map(([label, gas]) => ({
      debtors: /commitCycle \(\d+ participants, (\d+) debtors/.exec(label)?.[1],
      gas,
    }))
    .filter((row): row is { debtors: string; gas: number } => row.debtors !== undefined)
    .map((row) => ({ debtors: Number(row.debtors), gas: row.gas }));
  const pay = find(/^payNetDebit \(ETH\)/);
  const claim8 = find(/^claimNetCredit \(ETH/);
  const remunerate = find(/^remunerate/);
  if (commits.length < 2 || pay === undefined || claim8 === undefined || remunerate === undefined) {
    log(`could not read the gas table (exit ${run.status}); using docs/gas.md's figures`);
    return DOCUMENTED_GAS;
  }
  const n = commits.length;
  const mx = commits.reduce((s, c) => s + c.debtors, 0) / n;
  const my = commits.reduce((s, c) => s + c.gas, 0) / n;
  const slope =
    commits.reduce((s, c) => s + (c.debtors - mx) * (c.gas - my), 0) /
    commits.reduce((s, c) => s + (c.debtors - mx) ** 2, 0);
  return {
    source: "measured now by test/contracts/gas.test.ts",
    commitBase: Math.round(my - slope * mx),
    commitPerDebtor: Math.round(slope),
    pay,
    claim8,
    remunerate,
  };
}

/** On-chain gas of one clearing cycle: one commit, every debtor pays, every creditor claims. */
function cycleGas(gas: SuretyGas, debtors: number, creditors: number): number {
  const levels = Math.max(1, Math.ceil(Math.log2(debtors + creditors)));
  const claim = gas.claim8 + (levels - 3) * CLAIM_GAS_PER_LEVEL;
  return gas.commitBase + gas.commitPerDebtor * debtors + debtors * gas.pay + creditors * claim;
}

// ---------------------------------------------------------------------------
// The run
// ---------------------------------------------------------------------------

type Scheme = "exact" | "batch" | "surety";
const SCHEMES: readonly Scheme[] = ["exact", "batch", "surety"];
const LABEL: Record<Scheme | "free", string> = {
  exact: "exact",
  batch: "batch-settlement",
  surety: "svc-credit",
  free: "unpaid",
};

type Pay = (url: string) => Promise<Response>;

interface RunResult {
  paid: number;
  failed: number;
  /** Why requests failed: the settlement's `errorReason`, the status, or the thrown message. */
  reasons: Map<string, number>;
  seconds: number;
  /** The buyer's wall time per paid request (ms). */
  requestMs: number[];
  /** The seller's `/settle` round trips (ms) that happened during the run. */
  settleMs: number[];
  transactions: string[];
}

function fmt(ms: number): string {
  return ms < 10 ? ms.toFixed(2) : ms.toFixed(1);
}

function sortedCopy(values: readonly number[]): number[] {
  return [...values].sort((a, b) => a - b);
}

async function loop(
  payFor: (index: number) => Pay,
  url: string,
  timed: TimedFacilitatorClient,
): Promise<RunResult> {
  const before = timed.samples.length;
  const deadline = performance.now() + DURATION_S * 1000;
  let paid = 0;
  let failed = 0;
  const requestMs: number[] = [];
  const reasons = new Map<string, number>();
  const fail = (reason: string) => {
    failed++;
    reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
  };
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, index) => {
      const pay = payFor(index);
      while (performance.now() < deadline) {
        try {
          const t0 = performance.now();
          const response = await pay(url);
          await response.arrayBuffer();
          if (response.status === 200) {
            requestMs.push(performance.now() - t0);
            paid++;
            continue;
          }
          const header = response.headers.get("PAYMENT-RESPONSE");
          const reason = header === null ? undefined : decodePaymentResponseHeader(header).errorReason;
          fail(reason ?? `status ${response.status}`);
        } catch (error) {
          fail((error as Error).message.slice(0, 120));
        }
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const samples = timed.samples.slice(before).filter((s) => s.success);
  return {
    paid,
    failed,
    reasons,
    seconds,
    requestMs,
    settleMs: samples.map((s) => s.ms),
    transactions: samples.map((s) => s.transaction).filter((t) => t !== ""),
  };
}

function summarise(runs: RunResult[]) {
  const rates = runs.map((r) => r.paid / r.seconds);
  const p = (pick: (r: RunResult) => number[], q: number) =>
    median(runs.map((r) => (pick(r).length === 0 ? NaN : percentile(sortedCopy(pick(r)), q))));
  return {
    rate: median(rates),
    rateRange: [Math.min(...rates), Math.max(...rates)],
    p50: p((r) => r.requestMs, 50),
    p99: p((r) => r.requestMs, 99),
    settleP50: p((r) => r.settleMs, 50),
    settles: runs.reduce((s, r) => s + r.settleMs.length, 0),
    paid: runs.reduce((s, r) => s + r.paid, 0),
    failed: runs.reduce((s, r) => s + r.failed, 0),
  };
}

/** Sequential requests, one at a time: the buyer's wall time of each (ms); failures throw. */
async function sequential(pay: Pay, url: string, count: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < count; i++) {
    const t0 = performance.now();
    const response = await pay(url);
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`${url}: status ${response.status}`);
    out.push(performance.now() - t0);
  }
  return out;
}

async function gasOf(provider: JsonRpcProvider, hashes: readonly string[]): Promise<number[]> {
  return Promise.all(
    hashes.map(async (hash) => Number((await provider.getTransactionReceipt(hash))!.gasUsed)),
  );
}

const n0 = (value: number) => Math.round(value).toLocaleString("en-US");
const gasCell = (value: number) => (value < 10 ? value.toFixed(1) : n0(value));

async function serveFacilitator(facilitator: x402Facilitator, servers: Server[]): Promise<string> {
  const app = express();
  app.use(express.json());
  app.get("/supported", (_req, res) => void res.json(facilitator.getSupported()));
  app.post("/verify", async (req, res) => {
    res.json(await facilitator.verify(req.body.paymentPayload, req.body.paymentRequirements));
  });
  app.post("/settle", async (req, res) => {
    res.json(await facilitator.settle(req.body.paymentPayload, req.body.paymentRequirements));
  });
  const server = createServer(app);
  servers.push(server);
  return listen(server);
}

async function main(): Promise<void> {
  const gas = measureSuretyGas();
  log(`starting the devnet (chain, contracts, Core, facilitator) …`);
  const devnet = await startDevnet("surety-vs-peers-");
  const servers: Server[] = [];
  const provider = new JsonRpcProvider(devnet.rpc, devnet.deployment.chainId, {
    staticNetwork: true,
    cacheTimeout: -1, // a cached nonce would be stale between our own sequential transactions
  });
  provider.pollingInterval = 50;
  try {
    const chainId = devnet.deployment.chainId;
    const network = `eip155:${chainId}` as Network;
    const buyer = new Wallet(devAccount(BUYER_INDEX).privateKey, provider);
    const sellerAddress = devAccount(SELLER_INDEX).address;

    // The token both x402 schemes pay in.
    const token = await (
      await new Eip3009Token__factory(buyer).deploy(TOKEN_NAME, "xUSD")
    ).waitForDeployment();
    const tokenAddress = await token.getAddress();
    await (await token.mint(buyer.address, 10n ** 30n)).wait();
    const chain = defineChain({
      id: chainId,
      name: "surety-devnet",
      nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
      rpcUrls: { default: { http: [devnet.rpc] } },
    });

    // The exact side: facilitator (viem signer with a nonce manager: concurrent settlements).
    const facilitatorAccount = privateKeyToAccount(
      devAccount(EXACT_FACILITATOR_INDEX).privateKey as `0x${string}`,
      {
        nonceManager,
      },
    );
    const wallet = createWalletClient({
      account: facilitatorAccount,
      chain,
      transport: http(devnet.rpc),
      pollingInterval: 50,
    }).extend(publicActions);
    let sending: Promise<unknown> = Promise.resolve();
    const exactSigner = toFacilitatorEvmSigner({
      address: facilitatorAccount.address,
      readContract: (args) => wallet.readContract(args as never),
      verifyTypedData: (args) => wallet.verifyTypedData(args as never),
      // One signer's transactions must reach an automining node in nonce order (it cannot queue a
      // nonce gap), so sends are serialised; receipts are still awaited concurrently.
      writeContract: (args) => {
        const send = sending.then(async () => {
          try {
            return await wallet.writeContract({ ...args, account: facilitatorAccount, chain } as never);
          } catch (error) {
            sendErrors.set(shortError(error), (sendErrors.get(shortError(error)) ?? 0) + 1);
            throw error;
          }
        });
        sending = send.catch(() => undefined);
        return send;
      },
      sendTransaction: (args) => wallet.sendTransaction({ ...args, account: facilitatorAccount, chain }),
      waitForTransactionReceipt: (args) => wallet.waitForTransactionReceipt(args) as never,
      getCode: (args) => wallet.getCode(args),
    });
    const exactFacilitator = registerExactEvmScheme(new x402Facilitator(), {
      signer: exactSigner,
      networks: network,
    });
    const exactFacilitatorUrl = await serveFacilitator(exactFacilitator, servers);

    // The batch-settlement side: the from-spec escrow at the canonical addresses, the official facilitator.
    await installBatchSettlementFromSpec(buyer, (method, params) => provider.send(method, params));
    const batch = batchSettlementFacilitator({
      chain,
      transport: http(devnet.rpc),
      network,
      signerKey: devAccount(BATCH_FACILITATOR_INDEX).privateKey as `0x${string}`,
      authorizerKey: devAccount(BATCH_AUTHORIZER_INDEX).privateKey as `0x${string}`,
      onSendError: (error) => sendErrors.set(shortError(error), (sendErrors.get(shortError(error)) ?? 0) + 1),
    });
    const batchFacilitatorUrl = await serveFacilitator(batch.facilitator, servers);

    // The Surety side: the buyer's ETH collateral in the Vault.
    const vault = Vault__factory.connect(devnet.deployment.contracts.Vault.address, buyer);
    await (await vault.deposit({ value: parseEther("10") })).wait();

    // One seller, three schemes and the unpaid route.
    const timed: Record<Scheme, TimedFacilitatorClient> = {
      exact: new TimedFacilitatorClient({ url: exactFacilitatorUrl }),
      batch: new TimedFacilitatorClient({ url: batchFacilitatorUrl }),
      surety: new TimedFacilitatorClient({ url: devnet.facilitator }),
    };
    const batchServer = new BatchServerScheme(sellerAddress as `0x${string}`, {
      withdrawDelay: BATCH_WITHDRAW_DELAY,
    });
    const resourceServer = new x402ResourceServer([
      timed.exact,
      timed.batch,
      timed.surety,
    ] as FacilitatorClient[])
      .register(network, new ExactServerScheme())
      .register(network, batchServer)
      .register(network, new SuretyServerScheme());
    const tokenPrice = {
      asset: tokenAddress,
      amount: EXACT_PRICE.toString(),
      extra: { name: TOKEN_NAME, version: TOKEN_VERSION },
    };
    const routes: RoutesConfig = {
      "GET /exact": {
        accepts: {
          scheme: "exact",
          network,
          payTo: sellerAddress,
          // Automine makes a block per settlement and Hardhat's timestamps must increase, so at several
          // settlements a second the chain's clock runs ahead of the wall clock the client signs
          // validBefore with: an hour of validity keeps that drift from expiring authorizations.
          maxTimeoutSeconds: 3600,
          price: tokenPrice,
        },
      },
      "GET /batch": {
        accepts: {
          scheme: "batch-settlement",
          network,
          payTo: sellerAddress,
          maxTimeoutSeconds: 3600,
          price: tokenPrice,
        },
      },
      "GET /surety": {
        accepts: {
          scheme: SCHEME,
          network,
          payTo: sellerAddress,
          price: suretyPrice({ asset: ZERO_ADDRESS, amount: SURETY_PRICE }),
        },
      },
    };
    const sellerApp = express();
    sellerApp.use(paymentMiddleware(routes, resourceServer));
    sellerApp.get(
      ["/exact", "/batch", "/surety", "/free"],
      (req, res) => void res.json({ ok: true, path: req.path }),
    );
    const sellerServer = createServer(sellerApp);
    servers.push(sellerServer);
    const sellerUrl = await listen(sellerServer);

    // One buyer. exact and svc-credit share one client; batch-settlement has one channel per loop.
    const publicParams = await (await fetch(`${devnet.core}/core/public-params`)).json();
    const surety = new SuretyClientScheme({
      signer: buyer,
      domain: domainFromPublicParams(publicParams),
      maxAmountPerRequest: { [ZERO_ADDRESS]: SURETY_PRICE },
    });
    const buyerAccount = privateKeyToAccount(devAccount(BUYER_INDEX).privateKey as `0x${string}`);
    const tokenControl = { network, asset: tokenAddress, maxAmountPerPayment: EXACT_PRICE.toString() };
    const pay = wrapFetchWithPaymentFromConfig(fetch, {
      schemes: [
        { network, client: new ExactClientScheme(buyerAccount) },
        { network, client: surety },
      ],
      spendControls: { allowedAssets: [tokenControl, ...surety.spendControls().allowedAssets] },
    });
    const buyerPublic = createPublicClient({ chain, transport: http(devnet.rpc) });
    const batchPays = new Map<number, Pay>();
    const batchPay = (index: number): Pay => {
      let existing = batchPays.get(index);
      if (existing === undefined) {
        const client = new BatchClientScheme(toClientEvmSigner(buyerAccount, buyerPublic), {
          // The deposit the channel opens with: enough for the whole run (no top-ups while measuring). Through
          // `depositStrategy`: the official server announces `extra.minDeposit` (10 × the price by default) on every
          // 402, and the client deposits that announced amount instead of `depositMultiplier` × the price, so
          // `depositPolicy` alone gave a 10-payment channel and a top-up deposit every 10th payment (issue 28).
          depositPolicy: { depositMultiplier: BATCH_DEPOSIT_PAYMENTS },
          depositStrategy: () => (BigInt(BATCH_DEPOSIT_PAYMENTS) * EXACT_PRICE).toString(),
          salt: `0x${(index + 1).toString(16).padStart(64, "0")}`,
        });
        existing = wrapFetchWithPaymentFromConfig(fetch, {
          schemes: [{ network, client }],
          spendControls: { allowedAssets: [tokenControl] },
        });
        batchPays.set(index, existing);
      }
      return existing;
    };
    const payFor: Record<Scheme, (index: number) => Pay> = {
      exact: () => pay,
      batch: batchPay,
      surety: () => pay,
    };

    // Wait until Core has indexed the deposit, and check every route once (opens every batch channel).
    const deadline = Date.now() + 60_000;
    for (;;) {
      const response = await pay(`${sellerUrl}/surety`);
      await response.arrayBuffer();
      if (response.status === 200) break;
      if (Date.now() > deadline) throw new Error(`Surety probe still answers ${response.status} after 60 s`);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    const probe = await pay(`${sellerUrl}/exact`);
    if (probe.status !== 200) throw new Error(`exact probe answered ${probe.status}: ${await probe.text()}`);
    const batchDeposits: string[] = [];
    const depositMs: number[] = [];
    for (let i = 0; i < CONCURRENCY; i++) {
      const before = timed.batch.samples.length;
      const t0 = performance.now();
      const opened = await batchPay(i)(`${sellerUrl}/batch`);
      if (opened.status !== 200)
        throw new Error(`batch-settlement probe answered ${opened.status}: ${await opened.text()}`);
      depositMs.push(performance.now() - t0);
      batchDeposits.push(
        ...timed.batch.samples
          .slice(before)
          .map((s) => s.transaction)
          .filter((t) => t !== ""),
      );
    }

    // Phase 1: sequential latency over the unpaid route, automine, alternated.
    const seq: Record<Scheme | "free", number[]> = { free: [], exact: [], batch: [], surety: [] };
    for (let round = 0; round < SEQ_ROUNDS; round++) {
      seq.free.push(...(await sequential(fetch, `${sellerUrl}/free`, SEQ_REQUESTS)));
      for (const scheme of SCHEMES)
        seq[scheme].push(
          ...(await sequential(
            payFor[scheme](0),
            `${sellerUrl}/${scheme === "batch" ? "batch" : scheme}`,
            SEQ_REQUESTS,
          )),
        );
    }
    const seqRow = (key: Scheme | "free") => {
      const sorted = sortedCopy(seq[key]);
      return { p50: percentile(sorted, 50), p99: percentile(sorted, 99) };
    };
    const free = seqRow("free");
    const latencyRows = (["free", ...SCHEMES] as const).map((key) => {
      const row = seqRow(key);
      return (
        `| ${LABEL[key]} | ${fmt(row.p50)} | ${fmt(row.p99)} | ` +
        (key === "free" ? "– | – |" : `${fmt(row.p50 - free.p50)} | ${fmt(row.p99 - free.p99)} |`)
      );
    });
    log(`sequential latency done (${SEQ_ROUNDS} × ${SEQ_REQUESTS} requests per route)`);

    // Phase 2: throughput per mining mode.
    const modes = [
      { name: "automine", setup: async () => void (await provider.send("evm_setAutomine", [true])) },
      {
        name: `${BLOCK_MS / 1000} s blocks`,
        setup: async () => {
          await provider.send("evm_setAutomine", [false]);
          await provider.send("evm_setIntervalMining", [BLOCK_MS]);
        },
      },
    ];
    const report: string[] = [];
    const ratioRows: string[] = [];
    let exactGas: number[] = [];
    for (const mode of modes) {
      await mode.setup();
      const runs: Record<Scheme, RunResult[]> = { exact: [], batch: [], surety: [] };
      for (let i = 0; i < RUNS; i++) {
        for (const scheme of SCHEMES) {
          const load = loadavg()[0].toFixed(2);
          const result = await loop(payFor[scheme], `${sellerUrl}/${scheme}`, timed[scheme]);
          runs[scheme].push(result);
          log(
            `${mode.name}, ${LABEL[scheme]} run ${i + 1}/${RUNS}: ${(result.paid / result.seconds).toFixed(1)} paid req/s ` +
              `(${result.paid} paid, ${result.failed} failed${
                result.failed > 0 ? `: ${JSON.stringify(Object.fromEntries(result.reasons))}` : ""
              }, load ${load})`,
          );
        }
      }
      if (exactGas.length === 0)
        exactGas = await gasOf(provider, runs.exact.flatMap((r) => r.transactions).slice(0, 50));
      const figures = Object.fromEntries(SCHEMES.map((s) => [s, summarise(runs[s])])) as Record<
        Scheme,
        ReturnType<typeof summarise>
      >;
      for (const scheme of SCHEMES) {
        const f = figures[scheme];
        report.push(
          `| ${mode.name} | ${LABEL[scheme]} | ${f.rate.toFixed(1)} (${f.rateRange.map((r) => r.toFixed(1)).join("–")}) | ` +
            `${fmt(f.p50)} | ${fmt(f.p99)} | ${f.settles === 0 ? "none" : `${fmt(f.settleP50)} (${f.settles} calls / ${f.paid} paid)`} | ${f.failed} |`,
        );
      }
      const s = figures.surety;
      ratioRows.push(
        `| ${mode.name} | ${(s.rate / figures.exact.rate).toFixed(1)}× | ${(s.rate / figures.batch.rate).toFixed(2)}× | ` +
          `${(figures.exact.p50 / s.p50).toFixed(1)}× lower | ${(figures.batch.p50 / s.p50).toFixed(2)}× |`,
      );
    }
    await provider.send("evm_setAutomine", [true]);

    // Phase 3: batch-settlement's claims and settle through the official channel manager.
    const manager = batchServer.createChannelManager(timed.batch, network, tokenAddress as `0x${string}`);
    const single = await manager.claim({ maxClaimsPerBatch: 1 });
    for (let i = 0; i < CONCURRENCY; i++) await sequential(batchPay(i), `${sellerUrl}/batch`, 1);
    const all = await manager.claim({ maxClaimsPerBatch: 1000 });
    const settled = await manager.settle();
    const claim1 = median(
      await gasOf(
        provider,
        single.map((c) => c.transaction),
      ),
    );
    const claimAll = median(
      await gasOf(
        provider,
        all.map((c) => c.transaction),
      ),
    );
    const rowsAll = all[0]?.vouchers ?? 0;
    const claimRow = rowsAll > 1 ? (claimAll - claim1) / (rowsAll - 1) : NaN;
    const claimBase = claim1 - claimRow;
    const settleGas = (await gasOf(provider, [settled.transaction]))[0];
    const depositGas = median(await gasOf(provider, batchDeposits));

    const exactPerPayment = median(exactGas);
    const perGuarantee = (guarantees: number, debtors: number, creditors: number) =>
      cycleGas(gas, debtors, creditors) / guarantees;
    const TX_GAS_CAP = 16_777_216; // EIP-7825: rows per claim transaction are bounded by it
    const rowsPerTx = Math.floor((TX_GAS_CAP - claimBase) / claimRow);
    /** Claims + settles of one claim window: `channels` channels, `receivers` receivers, `payments` payments. */
    const batchWindowGas = (channels: number, receivers: number) =>
      Math.ceil(channels / rowsPerTx) * claimBase + channels * claimRow + receivers * settleGas;
    const gasRows = [
      `| exact (transferWithAuthorization, median of ${exactGas.length} receipts) | ${n0(exactPerPayment)} | ${n0(exactPerPayment)} | ${n0(exactPerPayment)} | ${n0(exactPerPayment)} |`,
    ];
    const batchCells = [
      [1, 1, 1],
      [50, 50, 2500],
    ].flatMap(([, receivers, channels]) =>
      [1_000, 100_000].map((p) => gasCell(batchWindowGas(channels, receivers) / p)),
    );
    gasRows.push(
      `| batch-settlement (claimWithSignature + settle per window, deposits apart) | ${batchCells.join(" | ")} |`,
    );
    const suretyCells = [
      [1, 1],
      [50, 50],
    ].flatMap(([d, c]) => [1_000, 100_000].map((g) => gasCell(perGuarantee(g, d, c))));
    gasRows.push(
      `| svc-credit V1 (commit + pays + claims per cycle, Vault deposits apart) | ${suretyCells.join(" | ")} |`,
    );
    gasRows.push(
      `| svc-credit V2 (remunerate per guarantee) | ${n0(gas.remunerate)} | ${n0(gas.remunerate)} | ${n0(gas.remunerate)} | ${n0(gas.remunerate)} |`,
    );

    // Capital a buyer locks to spend a budget B per claim window / clearing cycle over K sellers.
    const budget = 1_000n * EXACT_PRICE;
    const capitalRows = [1, 10, 100].map((k) => {
      const unknownSplit = BigInt(k) * budget;
      return (
        `| ${k} | 0 (each payment moves its ${EXACT_PRICE} units when it happens: one transaction per payment) | ` +
        `${n0(Number(budget))} split over ${k} channel${k === 1 ? "" : "s"} if the split is known; ${n0(Number(unknownSplit))} ` +
        `(each channel able to take all of B) if not; ${k} deposit${k === 1 ? "" : "s"} = ${n0(k * depositGas)} gas; ` +
        `a channel that runs dry needs a top-up deposit on the request path | ` +
        `${n0(Number(budget))} in one Vault deposit, whatever the split (one pool backs guarantees to every seller) |`
      );
    });

    process.stdout.write(
      [
        "",
        `x402 exact vs x402 batch-settlement (official @x402/evm 2.27, FROM-SPEC escrow) vs Surety svc-credit`,
        "",
        `Sequential paid request, automine, ${SEQ_ROUNDS} rounds × ${SEQ_REQUESTS} requests per route alternated (the buyer's wall time):`,
        "",
        "| Route | p50 ms | p99 ms | added p50 ms | added p99 ms |",
        "| --- | ---: | ---: | ---: | ---: |",
        ...latencyRows,
        "",
        `Throughput: ${CONCURRENCY} concurrent buyer loops, ${RUNS} × ${DURATION_S} s per scheme and mode, medians:`,
        "",
        "| Mining | Scheme | Paid req/s (min–max) | Request p50 ms | Request p99 ms | Facilitator /settle p50 ms | Failed |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: |",
        ...report,
        "",
        "| Mining | svc-credit / exact req/s | svc-credit / batch-settlement req/s | p50 vs exact | p50 batch / svc-credit |",
        "| --- | ---: | ---: | ---: | ---: |",
        ...ratioRows,
        "",
        `batch-settlement on chain (from-spec escrow): deposit ${n0(depositGas)} gas (median of ${batchDeposits.length}, ` +
          `${fmt(median(depositMs))} ms for the channel-opening request); claimWithSignature ${n0(claim1)} gas with 1 row, ` +
          `${n0(claimAll)} with ${rowsAll} rows (≈ ${n0(claimBase)} + ${n0(claimRow)}/row, ≤ ${n0(rowsPerTx)} rows under EIP-7825); settle ${n0(settleGas)}.`,
        `svc-credit cycle gas: ${gas.source}; commit ≈ ${n0(gas.commitBase)} + ${n0(gas.commitPerDebtor)}/debtor, ` +
          `pay ${n0(gas.pay)}, claim ${n0(gas.claim8)} at 8 leaves + ${CLAIM_GAS_PER_LEVEL}/level; amortised by formula.`,
        sendErrors.size === 0
          ? "The facilitators sent every transaction."
          : `The facilitators failed to send: ${JSON.stringify(Object.fromEntries(sendErrors))}`,
        "",
        "Gas per payment (50 ↔ 50: every payer pays every seller: batch-settlement has 2,500 channels, svc-credit nets 50 debtors + 50 creditors):",
        "",
        "| Payment | 1 → 1, 1k per window | 1 → 1, 100k | 50 ↔ 50, 1k | 50 ↔ 50, 100k |",
        "| --- | ---: | ---: | ---: | ---: |",
        ...gasRows,
        "",
        `Capital a buyer must lock to spend B = ${n0(Number(budget))} units (1,000 payments) per claim window / cycle over K sellers:`,
        "",
        "| K | exact | batch-settlement | svc-credit |",
        "| ---: | --- | --- | --- |",
        ...capitalRows,
        "",
        `RESULT ${JSON.stringify({ free, seq: Object.fromEntries(SCHEMES.map((s) => [s, seqRow(s)])), depositGas, claim1, claimAll, rowsAll, settleGas, exactGas: exactPerPayment })}`,
        "",
      ].join("\n"),
    );
  } finally {
    for (const server of servers) await close(server);
    provider.destroy();
    await stopDevnet(devnet);
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(`[vs-peers] FAILED: ${(error as Error).stack ?? String(error)}`);
    process.exit(1);
  },
);
