/**
 * The whole protocol on one chain, for the end-to-end tests (test/e2e/protocol*.test.ts): the contracts
 * deployed with `deploySurety` on the in-process Hardhat network (test/operator/indexer-fixtures.ts
 * `chainFixture`: operator EOA = Hardhat #1, Core's BLS key in the Vault, tUSD/tETH minted to the
 * participants and approved to the Vault and the ClearingHouse), a real Core HTTP server over a SQLite
 * file in a temp dir, a real facilitator server talking to it over HTTP, and Core's background tasks
 * (indexer, V2 lifecycle, operator sender, clearing scheduler, keeper) built exactly as the server builds them
 * (`createBackgroundTasks`) but driven by explicit rounds instead of a timer. Core's and the
 * facilitator's clocks are manual and kept on the chain's time; time moves with `time.increase`.
 */
import { signFinalization } from "../../sdk/finalization";
import type { IClearingHouse } from "../../typechain-types/contracts/ClearingHouse";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadFixture, mine, time } from "@nomicfoundation/hardhat-network-helpers";
import { expect } from "chai";
import { keccak256, toUtf8Bytes, Wallet } from "ethers";
import { ethers, network } from "hardhat";
import { type Certificate, type PayerSignature, parseCertificate } from "../../sdk/certificate";
import type { GuaranteeClaims, ValidationPolicy } from "../../sdk/claims";
import { signGuarantee } from "../../sdk/eip712";
import { guaranteeId } from "../../sdk/ids";
import type { X402Version } from "../../sdk/x402";
import { ManualClock as FacilitatorClock } from "../../facilitator/clock";
import { facilitatorConfigFromObject } from "../../facilitator/config";
import { silentFacilitatorLogger } from "../../facilitator/logger";
import { type FacilitatorServer, startFacilitatorServer } from "../../facilitator/server";
import { ChainVaultCheck } from "../../facilitator/vault-check";
import type { ContractWalletCheck } from "../../facilitator/contract-wallets";
import { type BackgroundTasks, createBackgroundTasks } from "../../operator/background";
import type { ChainProvider } from "../../operator/chain/indexer";
import { ManualClock } from "../../operator/clock";
import type { OperatorConfigInput } from "../../operator/config";
import { silentLogger } from "../../operator/logger";
import { type CoreServer, startCoreServer } from "../../operator/server";
import { devAccount } from "../../scripts/devnet/accounts";
import { DEVNET_BOND_FLOOR_BPS } from "../../scripts/devnet/contracts";
import { bodyFor } from "../facilitator/helpers";
import { asyncConfig, chainFixture, type ChainFixture } from "../operator/indexer-fixtures";
import { hardhatChain, type JsonResponse, request, signIn } from "../operator/helpers";

export const CHAIN_ID = 31337;
/** The facilitator's wallet: its SIWE identity towards Core (never sends a transaction). */
const FACILITATOR_WALLET = new Wallet(keccak256(toUtf8Bytes("surety e2e: facilitator wallet")));

/** Hardhat account indexes of chainFixture's named signers. */
const ACCOUNT = { alice: 2, bob: 3, carol: 4, dave: 5, validator: 6 } as const;
export type Participant = keyof typeof ACCOUNT;

export interface Issued {
  id: string;
  certificate: Certificate;
  claims: GuaranteeClaims;
  /** The payer's own signature the certificate was issued for (what `Vault.remunerate` also checks). */
  payer: PayerSignature;
}

/** One round of Core's background tasks, in the server's order, plus a last indexer pass. */
export interface RoundResult {
  lifecycle: Awaited<ReturnType<BackgroundTasks["lifecycle"]["tick"]>>;
  scheduler: Awaited<ReturnType<NonNullable<BackgroundTasks["scheduler"]>["tick"]>>;
  keeper: Awaited<ReturnType<NonNullable<BackgroundTasks["keeper"]>["tick"]>>;
}

export interface ProtocolStack {
  f: ChainFixture;
  core: CoreServer;
  facilitator: FacilitatorServer;
  tasks: BackgroundTasks;
  /** Participants as ethers Wallets on the Hardhat provider (same addresses as chainFixture's signers). */
  w: Record<Participant, Wallet>;
  /** Core's clock and the facilitator's, set to the chain's latest block time. */
  syncClocks(): Promise<number>;
  /** Moves chain time (a new block) and both clocks forward. */
  advance(seconds: number): Promise<void>;
  /** Runs indexer → lifecycle → verdict pins → sender → operator key → scheduler → keeper → indexer once, failing on any error. */
  round(): Promise<RoundResult>;
  /** A payer-signed guarantee settled through the facilitator (`POST /settle`, real HTTP). */
  settle(
    payer: Participant,
    recipient: Participant,
    amount: bigint,
    asset: string,
    options?: { policy?: Partial<ValidationPolicy>; x402Version?: X402Version },
  ): Promise<Issued>;
  /** The raw /settle answer, for refusals. */
  settleRaw(claims: GuaranteeClaims, x402Version?: X402Version): Promise<JsonResponse>;
  /** Claims for `payer` → `recipient` at Core's current time with a fresh req_id. */
  claimsFor(
    payer: Participant,
    recipient: Participant,
    amount: bigint,
    asset: string,
    policy?: Partial<ValidationPolicy>,
  ): GuaranteeClaims;
  /** A Core request signed in as `who` (SIWE, cached access token). */
  coreAs(who: Participant, method: string, path: string, json?: unknown): Promise<JsonResponse>;
  /** `POST /core/guarantees/{id}/finalize` as `payer`, with its EIP-712 `Finalization` signature. */
  finalize(payer: Participant, id: string): Promise<JsonResponse>;
  /** `GET /core/guarantees/{id}`'s state, read by the payer. */
  stateOf(payer: Participant, id: string): Promise<string>;
  /** `GET /core/users/{address}/balances` row of `asset`. */
  balanceOf(who: Participant, asset: string): Promise<Record<string, string | number>>;
  close(): Promise<void>;
}

let nextReqId = 1n;
/** Bound on the facilitator's Vault check (the in-process chain answers in milliseconds). */
const CHAIN_CHECK_TIMEOUT_MS = 5_000;

/**
 * The default deployment: deploySurety's timings with the bond floor on and the devnet's operator bonds
 * posted, as on the devnet (Core checks its bond before every commit).
 */
export function flooredChainFixture(): Promise<ChainFixture> {
  return chainFixture(undefined, { bondFloorBps: DEVNET_BOND_FLOOR_BPS });
}

export interface ProtocolStackOptions {
  /** The deployment (default {@link flooredChainFixture}); a module-level function (loadFixture). */
  fixture?: () => Promise<ChainFixture>;
  /** Core settings on top of the stack's own. */
  config?: OperatorConfigInput;
  /** The facilitator's reads of payers' registered signing keys (default: none, EOA payers only, as without an RPC URL). */
  contractWallets?: ContractWalletCheck;
}

/** The stack on a freshly reverted chain (loadFixture): each test starts from the same deployment. */
export async function startProtocolStack(options: ProtocolStackOptions = {}): Promise<ProtocolStack> {
  const f = await loadFixture(options.fixture ?? flooredChainFixture);
  // A fixture snapshot keeps the block it was taken at, but the next block is stamped with the wall clock:
  // minutes later when the snapshot was made earlier in the suite. Mine one block so the clocks below start
  // at the chain's real time, not at the snapshot's (claims stamped in the past missed registerBy).
  await mine();
  const w = Object.fromEntries(
    Object.entries(ACCOUNT).map(([name, index]) => [
      name,
      new Wallet(devAccount(index).privateKey, ethers.provider),
    ]),
  ) as Record<Participant, Wallet>;
  for (const [name, signer] of [
    ["alice", f.alice],
    ["bob", f.bob],
    ["carol", f.carol],
    ["dave", f.dave],
    ["validator", f.validator],
  ] as const) {
    if (w[name].address !== signer.address) throw new Error(`dev account of ${name} is not chainFixture's`);
  }

  const dir = mkdtempSync(join(tmpdir(), "surety-e2e-"));
  const coreClock = new ManualClock(await time.latest());
  const facilitatorClock = new FacilitatorClock(await time.latest());
  // No timer: the server's own background loop is off; the same tasks are built below and driven by hand.
  // Rounds driven by hand are as far apart as the machine makes them: no wall-clock staleness bound
  // (the issuance gate's other states still apply; test/operator/chain-sync.test.ts covers staleness).
  const config = asyncConfig(dir, {
    ...options.config,
    facilitators: [FACILITATOR_WALLET.address],
    backgroundTasks: false,
    indexerMaxStaleSeconds: 86_400,
  });
  let core: CoreServer | undefined;
  let facilitator: FacilitatorServer | undefined;
  const close = async () => {
    await facilitator?.close();
    await core?.close();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    core = await startCoreServer(config, {
      clock: coreClock,
      logger: silentLogger(),
      deployment: f.deployment,
      chain: hardhatChain(),
    });
    facilitator = await startFacilitatorServer(
      facilitatorConfigFromObject({
        host: "127.0.0.1",
        port: 0,
        logLevel: "silent",
        privateKey: FACILITATOR_WALLET.privateKey,
        coreUrl: core.url,
        chainId: CHAIN_ID,
      }),
      {
        clock: facilitatorClock,
        logger: silentFacilitatorLogger(),
        // Core is checked against the Vault on the test chain, as SURETY_FACILITATOR_RPC_URL does.
        vaultCheck: new ChainVaultCheck(ethers.provider, CHAIN_CHECK_TIMEOUT_MS),
        contractWallets: options.contractWallets ?? null,
      },
    );
  } catch (error) {
    await close();
    throw error;
  }
  const coreServer = core;
  const tasks = await createBackgroundTasks({
    ...coreServer.context,
    provider: ethers.provider as unknown as ChainProvider,
  });

  const syncClocks = async () => {
    const now = await time.latest();
    coreClock.set(now);
    facilitatorClock.set(now);
    return now;
  };
  const tokens = new Map<Participant, string>();
  const coreAs = async (
    who: Participant,
    method: string,
    path: string,
    json?: unknown,
  ): Promise<JsonResponse> => {
    if (!tokens.has(who)) tokens.set(who, (await signIn(coreServer.url, w[who])).access_token);
    const answer = await request(coreServer.url, method, path, {
      headers: { authorization: `Bearer ${tokens.get(who)}` },
      json,
    });
    // Access tokens expire on Core's clock, which the scenarios move: sign in again once.
    if (answer.status === 401 && answer.body?.code === "token_expired") {
      tokens.delete(who);
      return coreAs(who, method, path, json);
    }
    return answer;
  };
  const claimsFor = (
    payer: Participant,
    recipient: Participant,
    amount: bigint,
    asset: string,
    policy?: Partial<ValidationPolicy>,
  ): GuaranteeClaims => {
    const base = {
      user: w[payer].address,
      recipient: w[recipient].address,
      reqId: nextReqId++,
      amount,
      asset,
      timestamp: coreClock.nowSeconds(),
    };
    if (!policy) return { version: 1, ...base };
    return {
      version: 2,
      ...base,
      policy: {
        registry: f.deployment.validationRegistry,
        validator: w.validator.address,
        agentId: 7n,
        minScore: 80,
        jobHash: keccak256(toUtf8Bytes(`job-${base.reqId}`)),
        tag: "quality",
        deadline: coreClock.nowSeconds() + 120,
        ...policy,
      },
    };
  };
  const domain = { name: "Surety", version: "1", chainId: CHAIN_ID, verifyingContract: f.vaultAddress };
  const settleRaw = async (claims: GuaranteeClaims, x402Version: X402Version = 2) => {
    const payer = Object.values(w).find((wallet) => wallet.address === claims.user)!;
    const signature = await signGuarantee(payer, domain, claims, "eip712");
    return request(facilitator!.url, "POST", "/settle", {
      json: bodyFor({ claims, signature, scheme: "eip712" }, x402Version),
    });
  };

  return {
    f,
    core: coreServer,
    facilitator: facilitator!,
    tasks,
    w,
    syncClocks,
    advance: async (seconds) => {
      await time.increase(seconds);
      await syncClocks();
    },
    round: async () => {
      await tasks.indexer.tick();
      const lifecycle = await tasks.lifecycle.tick();
      await tasks.pinner!.tick();
      await tasks.sender!.tick();
      await tasks.keyWatch!.tick();
      const scheduler = await tasks.scheduler!.tick();
      const keeper = await tasks.keeper!.tick();
      await tasks.indexer.tick();
      return { lifecycle, scheduler, keeper };
    },
    claimsFor,
    settleRaw,
    settle: async (payer, recipient, amount, asset, options = {}) => {
      const claims = claimsFor(payer, recipient, amount, asset, options.policy);
      const answer = await settleRaw(claims, options.x402Version);
      if (answer.status !== 200 || answer.body.success !== true) {
        throw new Error(`/settle refused: ${answer.status} ${JSON.stringify(answer.body)}`);
      }
      const id = guaranteeId({ chainId: CHAIN_ID, vault: f.vaultAddress }, claims.user, claims.reqId);
      if (answer.body.transaction.toLowerCase() !== id.toLowerCase()) throw new Error("settled another id");
      // Deterministic (RFC 6979): the very signature settleRaw sent.
      const payerWallet = Object.values(w).find((wallet) => wallet.address === claims.user)!;
      const signature = await signGuarantee(payerWallet, domain, claims, "eip712");
      return {
        id,
        claims,
        certificate: parseCertificate(answer.body.certificate),
        payer: { scheme: "eip712", signature },
      };
    },
    coreAs,
    finalize: async (payer, id) =>
      coreAs(payer, "POST", `/core/guarantees/${id}/finalize`, {
        signature: await signFinalization(w[payer], domain, id),
      }),
    stateOf: async (payer, id) => {
      const answer = await coreAs(payer, "GET", `/core/guarantees/${id}`);
      if (answer.status !== 200)
        throw new Error(`GET guarantee: ${answer.status} ${JSON.stringify(answer.body)}`);
      return answer.body.state as string;
    },
    balanceOf: async (who, asset) => {
      const answer = await coreAs(who, "GET", `/core/users/${w[who].address}/balances`);
      if (answer.status !== 200)
        throw new Error(`GET balances: ${answer.status} ${JSON.stringify(answer.body)}`);
      const row = (answer.body.balances as Record<string, string | number>[]).find(
        (b) => String(b.asset_address).toLowerCase() === asset.toLowerCase(),
      );
      if (!row) throw new Error(`no ${asset} balance for ${who}`);
      return row;
    },
    close,
  };
}

/** ETH spent on gas by a mined transaction. */
export async function gasCost(tx: { wait(): Promise<{ gasUsed: bigint; gasPrice: bigint } | null> }) {
  const receipt = await tx.wait();
  return receipt!.gasUsed * receipt!.gasPrice;
}

/**
 * A JSON-RPC endpoint over HTTP for the in-process Hardhat network, so that tools that only take an
 * RPC URL (the CLI) run against the same chain as the tests.
 */
export async function startRpcBridge(): Promise<{ url: string; close(): Promise<void> }> {
  const answer = async (call: { id: unknown; method: string; params?: unknown[] }) => {
    try {
      const result = await network.provider.request({ method: call.method, params: call.params ?? [] });
      return { jsonrpc: "2.0", id: call.id, result };
    } catch (error) {
      const e = error as { code?: number; message: string; data?: unknown };
      return {
        jsonrpc: "2.0",
        id: call.id,
        error: { code: e.code ?? -32603, message: e.message, data: e.data },
      };
    }
  };
  const server: Server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString()));
    req.on("end", async () => {
      const parsed = JSON.parse(body) as Parameters<typeof answer>[0] | Parameters<typeof answer>[0][];
      const result = Array.isArray(parsed) ? await Promise.all(parsed.map(answer)) : await answer(parsed);
      res.setHeader("content-type", "application/json");
      res.end(
        JSON.stringify(result, (_key, value: unknown) => (typeof value === "bigint" ? String(value) : value)),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** The participant's proof answer for `cycleId`, fetched from Core like a creditor would (no auth). */
export async function proofOf(stack: ProtocolStack, cycleId: number, who: Participant) {
  const response = await fetch(
    `${stack.core.url}/core/cycles/${cycleId}/participants/${stack.w[who].address}/proof`,
  );
  expect(response.status).to.equal(200);
  return (await response.json()) as {
    positions: {
      asset_address: string;
      debit: string;
      credit: string;
      claimed: boolean;
      claim_net_credit_args: [string, string, string, IClearingHouse.DebitSummaryStruct, string[]] | null;
    }[];
  };
}

export async function cycleOf(stack: ProtocolStack, cycleId: number) {
  const response = await fetch(`${stack.core.url}/core/cycles/${cycleId}`);
  expect(response.status).to.equal(200);
  return (await response.json()) as Record<string, unknown> & {
    debtors: Record<string, unknown>[];
    claims: Record<string, unknown>[];
  };
}

/**
 * Core's view (`GET /core/users/{address}/balances`) agrees with the Vault: `deposited` is the Vault
 * balance, `locked` is what the scenario expects and covers the on-chain obligation.
 */
export async function expectBooksAgree(
  stack: ProtocolStack,
  who: Participant,
  asset: string,
  locked: bigint,
) {
  const row = await stack.balanceOf(who, asset);
  const address = stack.w[who].address;
  expect(BigInt(row.deposited)).to.equal(await stack.f.vault.balanceOf(address, asset));
  expect(BigInt(row.locked)).to.equal(locked);
  expect(BigInt(row.locked) >= (await stack.f.vault.obligationOf(address, asset))).to.equal(true);
}

export { mine, time };
