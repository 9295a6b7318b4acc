/**
 * `npm run bench:vs-exact`: x402 `exact` and Surety `svc-credit` side by side,
 * same chain, same seller app, same buyer loop.
 *
 * Setup (all real, all on this machine):
 *   - the devnet (`scripts/devnet.ts` as a child process on free ports: a Hardhat node, the contracts,
 *     Core and Surety's facilitator);
 *   - an EIP-3009 token (`contracts/test/Eip3009Token.sol`) deployed on that chain, minted to the buyer;
 *   - the official x402 `exact` facilitator (`@x402/core`'s `x402Facilitator` + `@x402/evm`'s exact
 *     scheme, a viem signer over the node's RPC) served over HTTP in this process: it settles with
 *     `transferWithAuthorization` and waits for the receipt;
 *   - one seller on `@x402/express`: `GET /exact` (exact, the token) and `GET /surety` (svc-credit, ETH
 *     collateral the buyer deposited in the Vault), one `x402ResourceServer` with both facilitators;
 *   - one buyer: `@x402/fetch` with both client schemes, `BENCH_CONCURRENCY` loops paying as fast as
 *     they can for `BENCH_DURATION` seconds.
 *
 * For each mining mode (automine; `BENCH_BLOCK_MS` interval mining, as on an L2) and each scheme it runs
 * `BENCH_RUNS` alternating runs and reports medians: paid requests/s, settle latency p50/p99 (the seller's
 * `/settle` round trip: exact includes waiting for the receipt), and gas per payment (exact: measured on
 * the settlement receipts; Surety: commit + pays + claims per cycle amortised over 1k and 100k guarantees,
 * computed from per-item gas measured by test/contracts/gas.test.ts, which this bench runs first; V2:
 * `remunerate` per guarantee from the same run).
 *
 * Environment: BENCH_DURATION (10 s), BENCH_CONCURRENCY (8), BENCH_RUNS (3), BENCH_BLOCK_MS (2000),
 * BENCH_SKIP_GAS_TEST=1 (use docs/gas.md's figures instead of running the gas test).
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { loadavg, tmpdir } from "node:os";
import path from "node:path";
import { x402Facilitator } from "@x402/core/facilitator";
import {
  type FacilitatorClient,
  HTTPFacilitatorClient,
  type RoutesConfig,
  x402ResourceServer,
} from "@x402/core/server";
import type { Network, PaymentPayload, PaymentRequirements, SettleResponse } from "@x402/core/types";
import { toFacilitatorEvmSigner } from "@x402/evm";
import { ExactEvmScheme as ExactClientScheme } from "@x402/evm/exact/client";
import { registerExactEvmScheme } from "@x402/evm/exact/facilitator";
import { ExactEvmScheme as ExactServerScheme } from "@x402/evm/exact/server";
import { paymentMiddleware } from "@x402/express";
import { decodePaymentResponseHeader, wrapFetchWithPaymentFromConfig } from "@x402/fetch";
import { JsonRpcProvider, Wallet, parseEther } from "ethers";
import express from "express";
import { http, createWalletClient, defineChain, publicActions } from "viem";
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
import type { DevnetDeploymentFile } from "../devnet/contracts";
import { median, percentile } from "./stats";

const ROOT = path.resolve(__dirname, "../..");
const READY = /devnet ready: rpc=(\S+) core=(\S+) facilitator=(\S+)/;
const EXACT_PRICE = 1_000n; // token base units per request
const SURETY_PRICE = 1_000_000_000n; // wei per request (1 gwei)
const TOKEN_NAME = "Exact USD";
const TOKEN_VERSION = "2";
const BUYER_INDEX = 7;
const SELLER_INDEX = 8;
const EXACT_FACILITATOR_INDEX = 9;

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
  process.stdout.write(`[vs-exact] ${message}\n`);
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function close(server: Server): Promise<void> {
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

// ---------------------------------------------------------------------------
// Devnet child
// ---------------------------------------------------------------------------

interface Devnet {
  child: ChildProcess;
  rpc: string;
  core: string;
  facilitator: string;
  deployment: DevnetDeploymentFile;
  dir: string;
}

async function startDevnet(): Promise<Devnet> {
  const dir = mkdtempSync(path.join(tmpdir(), "surety-vs-exact-"));
  const deploymentFile = path.join(dir, "deployment.json");
  const env = {
    ...process.env,
    SURETY_DEVNET_RPC_PORT: String(await freePort()),
    SURETY_DEVNET_CORE_PORT: String(await freePort()),
    SURETY_DEVNET_FACILITATOR_PORT: String(await freePort()),
    SURETY_DEVNET_DATA_DIR: path.join(dir, "data"),
    SURETY_DEVNET_DEPLOYMENT_FILE: deploymentFile,
  };
  const child = spawn(process.execPath, ["-r", "ts-node/register/transpile-only", "scripts/devnet.ts"], {
    cwd: ROOT,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const urls = await new Promise<RegExpExecArray>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`devnet not ready in 120 s:\n${output}`)), 120_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = READY.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match);
      }
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    child.once("exit", (code) => reject(new Error(`devnet exited (${code}):\n${output}`)));
  });
  child.stdout!.resume();
  child.stderr!.resume();
  const deployment = JSON.parse(readFileSync(deploymentFile, "utf8")) as DevnetDeploymentFile;
  return { child, rpc: urls[1], core: urls[2], facilitator: urls[3], deployment, dir };
}

async function stopDevnet(devnet: Devnet): Promise<void> {
  const exited = new Promise((resolve) => devnet.child.once("exit", resolve));
  devnet.child.kill("SIGINT");
  await exited;
  rmSync(devnet.dir, { recursive: true, force: true });
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
  remunerate: 286_382,
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

interface RunResult {
  paid: number;
  failed: number;
  /** Why requests failed: the settlement's `errorReason`, the status, or the thrown message. */
  reasons: Map<string, number>;
  seconds: number;
  settleMs: number[];
  transactions: string[];
}

async function loop(
  pay: (url: string) => Promise<Response>,
  url: string,
  timed: TimedFacilitatorClient,
): Promise<RunResult> {
  const before = timed.samples.length;
  const deadline = performance.now() + DURATION_S * 1000;
  let paid = 0;
  let failed = 0;
  const reasons = new Map<string, number>();
  const fail = (reason: string) => {
    failed++;
    reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
  };
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < deadline) {
        try {
          const response = await pay(url);
          await response.arrayBuffer();
          if (response.status === 200) {
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
    settleMs: samples.map((s) => s.ms),
    transactions: samples.map((s) => s.transaction),
  };
}

function summarise(runs: RunResult[]) {
  const rates = runs.map((r) => r.paid / r.seconds);
  const p50s = runs.map((r) =>
    percentile(
      [...r.settleMs].sort((a, b) => a - b),
      50,
    ),
  );
  const p99s = runs.map((r) =>
    percentile(
      [...r.settleMs].sort((a, b) => a - b),
      99,
    ),
  );
  return {
    rate: median(rates),
    rateRange: [Math.min(...rates), Math.max(...rates)],
    p50: median(p50s),
    p99: median(p99s),
    failed: runs.reduce((s, r) => s + r.failed, 0),
  };
}

async function main(): Promise<void> {
  const gas = measureSuretyGas();
  log(`starting the devnet (chain, contracts, Core, facilitator) …`);
  const devnet = await startDevnet();
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

    // The exact side: token, facilitator (viem signer with a nonce manager: concurrent settlements).
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
    const facilitatorApp = express();
    facilitatorApp.use(express.json());
    facilitatorApp.get("/supported", (_req, res) => void res.json(exactFacilitator.getSupported()));
    facilitatorApp.post("/verify", async (req, res) => {
      res.json(await exactFacilitator.verify(req.body.paymentPayload, req.body.paymentRequirements));
    });
    facilitatorApp.post("/settle", async (req, res) => {
      res.json(await exactFacilitator.settle(req.body.paymentPayload, req.body.paymentRequirements));
    });
    const exactFacilitatorServer = createServer(facilitatorApp);
    servers.push(exactFacilitatorServer);
    const exactFacilitatorUrl = await listen(exactFacilitatorServer);

    // The Surety side: the buyer's ETH collateral in the Vault.
    const vault = Vault__factory.connect(devnet.deployment.contracts.Vault.address, buyer);
    await (await vault.deposit({ value: parseEther("10") })).wait();

    // One seller, both schemes.
    const exactTimed = new TimedFacilitatorClient({ url: exactFacilitatorUrl });
    const suretyTimed = new TimedFacilitatorClient({ url: devnet.facilitator });
    const resourceServer = new x402ResourceServer([exactTimed, suretyTimed] as FacilitatorClient[])
      .register(network, new ExactServerScheme())
      .register(network, new SuretyServerScheme());
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
          price: {
            asset: tokenAddress,
            amount: EXACT_PRICE.toString(),
            extra: { name: TOKEN_NAME, version: TOKEN_VERSION },
          },
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
    sellerApp.get(["/exact", "/surety"], (req, res) => void res.json({ ok: true, path: req.path }));
    const sellerServer = createServer(sellerApp);
    servers.push(sellerServer);
    const sellerUrl = await listen(sellerServer);

    // One buyer, both schemes.
    const publicParams = await (await fetch(`${devnet.core}/core/public-params`)).json();
    const surety = new SuretyClientScheme({
      signer: buyer,
      domain: domainFromPublicParams(publicParams),
      maxAmountPerRequest: { [ZERO_ADDRESS]: SURETY_PRICE },
    });
    const buyerAccount = privateKeyToAccount(devAccount(BUYER_INDEX).privateKey as `0x${string}`);
    const pay = wrapFetchWithPaymentFromConfig(fetch, {
      schemes: [
        { network, client: new ExactClientScheme(buyerAccount) },
        { network, client: surety },
      ],
      spendControls: {
        allowedAssets: [
          { network, asset: tokenAddress, maxAmountPerPayment: EXACT_PRICE.toString() },
          ...surety.spendControls().allowedAssets,
        ],
      },
    });

    // Wait until Core has indexed the deposit, and check both routes once.
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
    let exactGas: number[] = [];
    for (const mode of modes) {
      await mode.setup();
      const runs: Record<"exact" | "surety", RunResult[]> = { exact: [], surety: [] };
      for (let i = 0; i < RUNS; i++) {
        for (const scheme of ["exact", "surety"] as const) {
          const load = loadavg()[0].toFixed(2);
          const result = await loop(
            pay,
            `${sellerUrl}/${scheme}`,
            scheme === "exact" ? exactTimed : suretyTimed,
          );
          runs[scheme].push(result);
          log(
            `${mode.name}, ${scheme} run ${i + 1}/${RUNS}: ${(result.paid / result.seconds).toFixed(1)} paid req/s ` +
              `(${result.paid} paid, ${result.failed} failed${
                result.failed > 0 ? `: ${JSON.stringify(Object.fromEntries(result.reasons))}` : ""
              }, load ${load})`,
          );
        }
      }
      if (exactGas.length === 0) {
        const sample = runs.exact.flatMap((r) => r.transactions).slice(0, 50);
        exactGas = await Promise.all(
          sample.map(async (hash) => Number((await provider.getTransactionReceipt(hash))!.gasUsed)),
        );
      }
      const exact = summarise(runs.exact);
      const suretyFigures = summarise(runs.surety);
      report.push(
        `| ${mode.name} | exact | ${exact.rate.toFixed(1)} (${exact.rateRange.map((r) => r.toFixed(1)).join("–")}) | ` +
          `${exact.p50.toFixed(1)} | ${exact.p99.toFixed(1)} | ${exact.failed} |`,
        `| ${mode.name} | svc-credit | ${suretyFigures.rate.toFixed(1)} (${suretyFigures.rateRange.map((r) => r.toFixed(1)).join("–")}) | ` +
          `${suretyFigures.p50.toFixed(1)} | ${suretyFigures.p99.toFixed(1)} | ${suretyFigures.failed} |`,
        `| ${mode.name} | ratio svc-credit / exact | ${(suretyFigures.rate / exact.rate).toFixed(1)}× | ` +
          `${(exact.p50 / suretyFigures.p50).toFixed(0)}× lower | ${(exact.p99 / suretyFigures.p99).toFixed(0)}× lower | |`,
      );
    }
    await provider.send("evm_setAutomine", [true]);

    const exactPerPayment = median(exactGas);
    const perGuarantee = (guarantees: number, debtors: number, creditors: number) =>
      cycleGas(gas, debtors, creditors) / guarantees;
    const gasRows = [
      `| exact (transferWithAuthorization, median of ${exactGas.length} receipts) | ${Math.round(exactPerPayment).toLocaleString("en-US")} | 1× |`,
    ];
    for (const [debtors, creditors] of [
      [1, 1],
      [50, 50],
    ]) {
      for (const guarantees of [1_000, 100_000]) {
        const g = perGuarantee(guarantees, debtors, creditors);
        gasRows.push(
          `| svc-credit V1, ${guarantees.toLocaleString("en-US")} guarantees/cycle, ${debtors} debtors + ${creditors} creditors | ` +
            `${g < 10 ? g.toFixed(1) : Math.round(g).toLocaleString("en-US")} | ${(exactPerPayment / g).toFixed(0)}× less |`,
        );
      }
    }
    gasRows.push(
      `| svc-credit V2, remunerate per guarantee | ${gas.remunerate.toLocaleString("en-US")} | ${(gas.remunerate / exactPerPayment).toFixed(1)}× more |`,
    );

    process.stdout.write(
      [
        "",
        `x402 exact vs Surety svc-credit: ${CONCURRENCY} concurrent buyer loops, ${RUNS} × ${DURATION_S} s per scheme and mode, medians`,
        "",
        "| Mining | Scheme | Paid req/s (min–max) | Settle p50 ms | Settle p99 ms | Failed |",
        "| --- | --- | ---: | ---: | ---: | ---: |",
        ...report,
        "",
        `Gas per payment (svc-credit cycle gas: ${gas.source}; commit ≈ ${gas.commitBase.toLocaleString("en-US")} + ` +
          `${gas.commitPerDebtor.toLocaleString("en-US")}/debtor, pay ${gas.pay.toLocaleString("en-US")}, claim ` +
          `${gas.claim8.toLocaleString("en-US")} at 8 leaves + ${CLAIM_GAS_PER_LEVEL}/level; amortised by formula, no 100k cycle is run)`,
        "",
        sendErrors.size === 0
          ? "The exact facilitator sent every settlement transaction."
          : `The exact facilitator failed to send: ${JSON.stringify(Object.fromEntries(sendErrors))}`,
        "",
        "| Payment | Gas per payment | vs exact |",
        "| --- | ---: | ---: |",
        ...gasRows,
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
    console.error(`[vs-exact] FAILED: ${(error as Error).stack ?? String(error)}`);
    process.exit(1);
  },
);
