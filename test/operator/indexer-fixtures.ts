/**
 * Fixtures for Core's asynchronous side: the contracts deployed with `deploySurety` on the in-process
 * Hardhat network (Core's BLS key set on the Vault), a real SQLite store in a temp dir, the issuance
 * service built by `createCoreContext`, and the indexer / scheduler / keeper / lifecycle tasks driven
 * by explicit `tick()` calls. Core's wall clock is manual (tests keep it on the chain's time or move it
 * apart on purpose); its chain clock is a real ChainClock fed by the harness's indexers.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { mine, time } from "@nomicfoundation/hardhat-network-helpers";
import { keccak256, toUtf8Bytes, Wallet, type Signer } from "ethers";
import { ethers } from "hardhat";
import { blsKeyFromSecret } from "../../sdk/bls";
import type { Certificate, PayerSignature } from "../../sdk/certificate";
import type { GuaranteeClaims, GuaranteeClaimsV2, SigningScheme } from "../../sdk/claims";
import { toWireSignedGuarantee } from "../../sdk/claims";
import { GuaranteeHasher, signGuarantee } from "../../sdk/eip712";
import { signFinalization, type FinalizationSigner } from "../../sdk/finalization";
import { guaranteeId } from "../../sdk/ids";
import { DEFAULT_SCOPES, type Principal } from "../../operator/auth";
import { ZERO_ADDRESS } from "../../sdk/wire";
import { DEV_TEST_TOKENS, deploySurety, type Timings } from "../../scripts/deploy";
import { postDevnetBonds } from "../../scripts/devnet/contracts";
import { createCoreContext, type CoreContext } from "../../operator/app";
import type { ChainGateway } from "../../operator/chain/gateway";
import { ChainIndexer, type ChainProvider } from "../../operator/chain/indexer";
import { ChainClock, ManualClock } from "../../operator/clock";
import { configFromObject, type OperatorConfig, type OperatorConfigInput } from "../../operator/config";
import { type DeploymentInfo, parseDeployment } from "../../operator/deployment";
import { type Logger, silentLogger } from "../../operator/logger";
import { SqliteStore, type Store } from "../../operator/store";
import { OperatorSender, type SenderPolicy } from "../../operator/chain/sender";
import { ClearingKeeper } from "../../operator/clearing/keeper";
import { ClearingScheduler } from "../../operator/clearing/scheduler";
import { V2Lifecycle } from "../../operator/lifecycle/v2-lifecycle";
import { VerdictPinner } from "../../operator/lifecycle/verdict-pins";

export const CORE_BLS_SECRET = "0x" + "5a".repeat(32);
/** Hardhat account #1: the ClearingHouse operator (commits cycles, keeper calls). */
export const OPERATOR_KEY = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d";
export const TOKEN_MINT = 10n ** 30n;

/**
 * @param bondFloor With it, the ClearingHouse's bond floor is on (`bondFloorBps`) and the admin posts the
 * devnet's operator bonds in every asset (scripts/devnet/contracts.ts), as on the devnet.
 */
export async function chainFixture(timings?: Partial<Timings>, bondFloor?: { bondFloorBps: number }) {
  const [admin, operator, alice, bob, carol, dave, validator, outsider] = await ethers.getSigners();
  const deployed = await deploySurety(admin, {
    operator: operator.address,
    operatorBlsPublicKey: blsKeyFromSecret(CORE_BLS_SECRET).publicKey,
    testTokens: DEV_TEST_TOKENS,
    timings,
    bondFloorBps: bondFloor?.bondFloorBps,
  });
  if (bondFloor) await postDevnetBonds(deployed, admin);
  const { vault, clearingHouse, validationRegistry, testTokens } = deployed;
  const [usd, teth] = testTokens;
  const vaultAddress = await vault.getAddress();
  const clearingHouseAddress = await clearingHouse.getAddress();
  for (const user of [alice, bob, carol, dave, outsider]) {
    for (const token of [usd, teth]) {
      await token.mint(user.address, TOKEN_MINT);
      await token.connect(user).approve(vaultAddress, ethers.MaxUint256);
      await token.connect(user).approve(clearingHouseAddress, ethers.MaxUint256);
    }
  }
  const deployment: DeploymentInfo = parseDeployment({ network: "hardhat", ...deployed.record });
  return {
    ...deployed,
    vault,
    clearingHouse,
    validationRegistry,
    usd,
    teth,
    usdAddress: await usd.getAddress(),
    tethAddress: await teth.getAddress(),
    vaultAddress,
    clearingHouseAddress,
    deployment,
    timings: deployed.record.config.timings,
    admin,
    operator,
    alice,
    bob,
    carol,
    dave,
    validator,
    outsider,
  };
}

export type ChainFixture = Awaited<ReturnType<typeof chainFixture>>;

export function tempDir(): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), "surety-async-"));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

export function asyncConfig(dataDir: string, overrides: OperatorConfigInput = {}): OperatorConfig {
  return configFromObject({
    host: "127.0.0.1",
    port: 0,
    logLevel: "silent",
    dataDir,
    chainId: 31337,
    jwtSecret: "test-jwt-secret-of-at-least-32-bytes!!",
    blsSecret: CORE_BLS_SECRET,
    operatorPrivateKey: OPERATOR_KEY,
    siweDomain: "core.surety.test",
    siweUri: "https://core.surety.test",
    ...overrides,
  });
}

export const provider = ethers.provider as unknown as ChainProvider;

/** The chain's latest block time: Core's manual clock is kept on it. */
export async function chainNow(): Promise<number> {
  return time.latest();
}

export interface CoreHarness {
  f: ChainFixture;
  dir: { path: string; remove(): void };
  store: SqliteStore;
  /** Core's wall clock. */
  clock: ManualClock;
  /** Core's chain time: the head the harness's indexers have applied. */
  chainClock: ChainClock;
  config: OperatorConfig;
  context: CoreContext;
  indexer: ChainIndexer;
  /** A new indexer over the same store (a restart). */
  newIndexer(confirmations?: number): ChainIndexer;
  /** Sets Core's clock to the chain's time. */
  syncClock(): Promise<number>;
  close(): Promise<void>;
}

export async function openCore(
  f: ChainFixture,
  options: {
    confirmations?: number;
    maxBlocksPerTick?: number;
    config?: OperatorConfigInput;
    /** Core's and the indexer's logger (default: silent). */
    logger?: Logger;
    /** Core's chain gateway (default: a stub without code reads, i.e. EOA payer signatures only). */
    chain?: ChainGateway;
    /**
     * Core's store (default: a fresh SQLite file). Typed as the SQLite store for the tests that use its
     * extras; a test passing a PostgreSQL store uses only the `Store` interface. Closed with the harness.
     */
    store?: Store;
  } = {},
): Promise<CoreHarness> {
  const dir = tempDir();
  const config = asyncConfig(dir.path, options.config);
  const store = (options.store ?? SqliteStore.open(join(dir.path, "core.sqlite"))) as SqliteStore;
  const clock = new ManualClock(await chainNow());
  const chainClock = new ChainClock(await store.chainJournal.getChainCursor());
  const logger = options.logger ?? silentLogger();
  // The stub answers the Vault's operator key as Core's own (Core starts only when they agree).
  const coreKey: { publicKey: Uint8Array } = { publicKey: new Uint8Array() };
  const context = createCoreContext({
    config,
    store,
    clock,
    chainClock,
    logger,
    deployment: f.deployment,
    chain: options.chain ?? {
      chainId: async () => 31337,
      blockNumber: async () => 0,
      vaultOperatorKey: async () => ({ set: true, publicKey: coreKey.publicKey }),
      vaultGuaranteeDomainSeparator: async () => "0x" + "00".repeat(32),
      vaultSetupFinished: async () => true,
      close: async () => {},
    },
  });
  coreKey.publicKey = context.signer.publicKey;
  const newIndexer = (confirmations = options.confirmations ?? 0) =>
    new ChainIndexer({
      store,
      provider,
      deployment: f.deployment,
      clock,
      logger,
      confirmations,
      maxBlocksPerTick: options.maxBlocksPerTick ?? 1_000,
      onCursor: (cursor) => chainClock.observe(cursor),
      creditDisputes: context.metrics,
    });
  return {
    f,
    dir,
    store,
    clock,
    chainClock,
    config,
    context,
    indexer: newIndexer(),
    newIndexer,
    syncClock: async () => {
      const now = await chainNow();
      clock.set(now);
      return now;
    },
    close: async () => {
      await store.close();
      dir.remove();
    },
  };
}

/** EIP-712 domain of the deployed Vault. */
export function domainOf(f: ChainFixture) {
  return { name: "Surety", version: "1", chainId: 31337, verifyingContract: f.vaultAddress };
}

/** The payer's `Finalization` signature of guarantee `id` (what `POST .../finalize` takes). */
export function finalizationOf(f: ChainFixture, payer: Signer, id: string): Promise<string> {
  return signFinalization(payer as unknown as FinalizationSigner, domainOf(f), id);
}

let reqCounter = 1n;

/** Issues a guarantee through Core's issuance service (real payer signature, real BLS certificate). */
export async function issueGuarantee(
  h: CoreHarness,
  payer: Signer,
  recipient: string,
  amount: bigint,
  asset: string = ZERO_ADDRESS,
  v2?: Partial<GuaranteeClaimsV2["policy"]>,
  scheme: SigningScheme = "eip712",
): Promise<{ id: string; certificate: Certificate; claims: GuaranteeClaims; payer: PayerSignature }> {
  const user = await payer.getAddress();
  const base = {
    user,
    recipient,
    reqId: reqCounter++,
    amount,
    asset,
    timestamp: h.clock.nowSeconds(),
  };
  const claims: GuaranteeClaims = v2
    ? {
        version: 2,
        ...base,
        policy: {
          registry: h.f.deployment.validationRegistry,
          validator: await h.f.validator.getAddress(),
          agentId: 7n,
          minScore: 80,
          jobHash: keccak256(toUtf8Bytes(`job-${base.reqId}`)),
          tag: "quality",
          deadline: h.clock.nowSeconds() + 60,
          ...v2,
        },
      }
    : { version: 1, ...base };
  const signature = await signGuarantee(payer as unknown as Wallet, domainOf(h.f), claims, scheme);
  const body = toWireSignedGuarantee({ claims, signature: signature.toLowerCase(), scheme });
  const principal: Principal = { wallet: recipient, scopes: DEFAULT_SCOPES, tokenId: "test", expiresAt: 0 };
  const certificate = await h.context.issuer.issue(principal, body);
  const id = guaranteeId({ chainId: 31337n, vault: h.f.vaultAddress }, user, base.reqId);
  return { id, certificate, claims, payer: { scheme, signature } };
}

export { mine, time };

/** The scheduler, keeper and lifecycle of a harness (operator account = Hardhat #1). */
export function clearingTasks(
  h: CoreHarness,
  options: {
    gasBudget?: bigint | null;
    maxDebtorsPerCommit?: number;
    maxAssetsPerCommit?: number;
    cycleLength?: number;
    claimCredits?: boolean;
    senderPolicy?: Partial<SenderPolicy>;
    /** The tasks' logger (default: silent). */
    logger?: Logger;
  } = {},
) {
  const logger = options.logger ?? silentLogger();
  const sender = new OperatorSender({
    privateKey: OPERATOR_KEY,
    provider,
    chainId: 31337n,
    store: h.store,
    logger,
    policy: options.senderPolicy,
  });
  const scheduler = new ClearingScheduler({
    store: h.store,
    provider,
    sender,
    deployment: h.f.deployment,
    chainClock: h.chainClock,
    logger,
    cycleLengthSeconds: options.cycleLength ?? h.f.timings.cycleLength,
    gasBudget: options.gasBudget ?? null,
    maxDebtorsPerCommit: options.maxDebtorsPerCommit,
    maxAssetsPerCommit: options.maxAssetsPerCommit,
  });
  const keeper = new ClearingKeeper({
    store: h.store,
    sender,
    deployment: h.f.deployment,
    chainClock: h.chainClock,
    logger,
    claimCredits: options.claimCredits ?? false,
  });
  const lifecycle = new V2Lifecycle({
    store: h.store,
    clock: h.clock,
    chainClock: h.chainClock,
    logger,
    chainId: 31337,
    hasher: new GuaranteeHasher(domainOf(h.f)),
  });
  const pinner = new VerdictPinner({
    store: h.store,
    sender,
    vault: h.f.deployment.vault,
    chainClock: h.chainClock,
    clock: h.clock,
    logger,
  });
  return { sender, scheduler, keeper, lifecycle, pinner };
}

/**
 * Moves chain time (a new block) and Core's wall clock forward together, and indexes up to the new
 * block so that Core's chain time (the indexed head) follows.
 */
export async function advance(h: CoreHarness, seconds: number): Promise<void> {
  await time.increase(seconds);
  await h.syncClock();
  await h.indexer.syncToHead();
}
