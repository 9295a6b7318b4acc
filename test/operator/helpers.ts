/**
 * Test fixtures for the operator: the contracts deployed for real on
 * Hardhat's in-process network (`deploySurety`, once per run through
 * loadFixture), a config for a temp directory, a Core on a free port with a
 * manual clock, a small JSON HTTP client and the SIWE sign-in dance with a
 * real wallet. Core reads the chain through the RpcChainGateway over
 * `ethers.provider` and runs its startup checks for real, the Vault key
 * check included.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import { computeAddress, getCreateAddress, keccak256, toUtf8Bytes, Wallet } from "ethers";
import { ethers } from "hardhat";
import { SiweMessage } from "siwe";
import { DEV_TEST_TOKENS, deploySurety, type SuretyDeployment } from "../../scripts/deploy";
import { blsKeyFromSecret } from "../../sdk/bls";
import { type ChainGateway, RpcChainGateway } from "../../operator/chain";
import { ManualClock } from "../../operator/clock";
import { configFromObject, type OperatorConfig, type OperatorConfigInput } from "../../operator/config";
import { type DeploymentInfo, parseDeployment } from "../../operator/deployment";
import { silentLogger } from "../../operator/logger";
import { type CoreServer, type CoreServerDeps, startCoreServer } from "../../operator/server";

/** A fixed start time keeps ISO strings and expiries reproducible. */
export const T0 = 1_750_000_000;
export const TEST_DOMAIN = "core.surety.test";
export const TEST_URI = "https://core.surety.test";
export const TEST_CHAIN_ID = 31337;

/** Core's BLS key material in tests; the test Vault holds the matching public key. */
export const TEST_BLS_SECRET = "0x" + "42".repeat(32);
export const TEST_BLS_PUBLIC_KEY: Uint8Array = blsKeyFromSecret(TEST_BLS_SECRET).publicKey;

/**
 * The test contracts' deployer: a key of its own (no test sends from it), so
 * its nonce is 0 whenever the deployment runs and the contract addresses are
 * the same in every run, whatever other test files did on the chain before.
 */
export const TEST_DEPLOYER_KEY = keccak256(toUtf8Bytes("surety operator tests: contract deployer"));
const TEST_DEPLOYER = computeAddress(TEST_DEPLOYER_KEY);
const DEPLOYER_BALANCE = 10n ** 21n; // 1,000 ETH: far more than the deployment's gas

/**
 * Deployer nonces of the contracts `deploySurety` creates with the options
 * used below (one operator key, no extra registries, the two dev test
 * tokens): registry, Vault, ClearingHouse, then setClearingHouse,
 * setOperatorKey and setTrustedRegistry, then the tokens. The fixture checks
 * the record against these, so a change in deploySurety's order fails loudly.
 */
// deploySurety's order: registry, verifier, the Vault's two libraries, Vault, the ClearingHouse's library,
// ClearingHouse, three wiring transactions (clearing house, operator key, trusted registry), test tokens.
const CREATE_NONCE = { ValidationRegistry: 0, Vault: 4, ClearingHouse: 8, tUSD: 12, tETH: 13 } as const;
const createdAt = (nonce: number) => getCreateAddress({ from: TEST_DEPLOYER, nonce });

/**
 * The deployment Core is started with, known before anything is deployed
 * (addresses derive from the deployer and its nonces) so that claim fixtures
 * can be module constants. `vaultDeployBlock` is 0 here; the deployment of
 * {@link deployTestContracts} carries the real block.
 */
export const TEST_DEPLOYMENT: DeploymentInfo = parseDeployment({
  network: "hardhat",
  chainId: TEST_CHAIN_ID,
  contracts: {
    Vault: { address: createdAt(CREATE_NONCE.Vault) },
    ClearingHouse: { address: createdAt(CREATE_NONCE.ClearingHouse) },
    ValidationRegistry: { address: createdAt(CREATE_NONCE.ValidationRegistry) },
  },
  config: { trustedRegistries: [createdAt(CREATE_NONCE.ValidationRegistry)] },
  tokens: [
    { address: createdAt(CREATE_NONCE.tUSD), symbol: "tUSD", decimals: 6 },
    { address: createdAt(CREATE_NONCE.tETH), symbol: "tETH", decimals: 18 },
  ],
});

export interface TestContracts {
  /** Live contract handles (connected to the deployer, who holds every Vault role) and the record. */
  surety: SuretyDeployment;
  /** `deployments/hardhat.json` as `scripts/deploy.ts` writes it (`writeDeployment`). */
  json: Record<string, unknown>;
  /** What Core reads from that file (`parseDeployment`); addresses equal {@link TEST_DEPLOYMENT}'s. */
  deployment: DeploymentInfo;
}

/** Deploys and checks the addresses; run through {@link deployTestContracts} only. */
async function deploySuretyForCore(): Promise<TestContracts> {
  const nonce = await ethers.provider.getTransactionCount(TEST_DEPLOYER);
  if (nonce !== 0) {
    throw new Error(
      `test deployer ${TEST_DEPLOYER} has nonce ${nonce}: deploy through deployTestContracts()`,
    );
  }
  await ethers.provider.send("hardhat_setBalance", [TEST_DEPLOYER, "0x" + DEPLOYER_BALANCE.toString(16)]);
  const deployer = new Wallet(TEST_DEPLOYER_KEY, ethers.provider);
  const surety = await deploySurety(deployer, {
    operatorBlsPublicKey: TEST_BLS_PUBLIC_KEY,
    testTokens: DEV_TEST_TOKENS,
  });
  const json = JSON.parse(JSON.stringify({ network: "hardhat", ...surety.record })) as Record<
    string,
    unknown
  >;
  const deployment = parseDeployment(json);
  const expected = JSON.stringify(TEST_DEPLOYMENT);
  const actual = JSON.stringify({ ...deployment, vaultDeployBlock: TEST_DEPLOYMENT.vaultDeployBlock });
  if (actual !== expected) {
    throw new Error(
      `deploySurety no longer deploys where the tests expect: ${actual} instead of ${expected}`,
    );
  }
  return { surety, json, deployment };
}

/**
 * The test contracts, deployed on the first call; every later call reverts
 * the chain to the state right after that deployment (loadFixture), so each
 * caller starts from the same chain. Anything done on chain before the call
 * is undone by it.
 */
export function deployTestContracts(): Promise<TestContracts> {
  return loadFixture(deploySuretyForCore);
}

/** The in-process Hardhat chain behind Core's gateway interface. */
export function hardhatChain(timeoutMs = 2_000): ChainGateway {
  return new RpcChainGateway(ethers.provider, { timeoutMs });
}

/**
 * Deps every test Core needs besides config: the deployment and the Hardhat
 * chain. The Vault key check is enforced, so the contracts must be deployed
 * first (`await deployTestContracts()`, which also gives `deployment`).
 */
export function testCoreDeps(
  deployment: DeploymentInfo = TEST_DEPLOYMENT,
): Pick<CoreServerDeps, "deployment" | "chain"> {
  return { deployment, chain: hardhatChain() };
}

/** A fresh temp directory; `remove()` deletes it. */
export function tempDir(): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), "surety-operator-"));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

export function testConfig(dataDir: string, overrides: OperatorConfigInput = {}): OperatorConfig {
  return configFromObject({
    host: "127.0.0.1",
    port: 0,
    logLevel: "silent",
    dataDir,
    chainId: TEST_CHAIN_ID,
    jwtSecret: "test-jwt-secret-of-at-least-32-bytes!!",
    blsSecret: TEST_BLS_SECRET,
    siweDomain: TEST_DOMAIN,
    siweUri: TEST_URI,
    siweStatement: "Sign in to Surety Core (test).",
    ...overrides,
  });
}

export interface TestCore {
  core: CoreServer;
  contracts: TestContracts;
  clock: ManualClock;
  config: OperatorConfig;
  stop(): Promise<void>;
}

/**
 * A Core on a free port over a SQLite file in a temp dir, on the freshly
 * deployed test contracts (see {@link deployTestContracts}: the chain is
 * reverted to them first); `stop()` closes it and removes the dir.
 */
export async function startTestCore(
  overrides: OperatorConfigInput = {},
  deps: Omit<CoreServerDeps, "clock"> = {},
): Promise<TestCore> {
  const contracts = await deployTestContracts();
  const dir = tempDir();
  const config = testConfig(dir.path, overrides);
  const clock = new ManualClock(T0);
  const core = await startCoreServer(config, {
    clock,
    // Core alone (no indexer): the test's clock stands for the chain's time too, unless a test gives one.
    chainClock: clock,
    logger: silentLogger(),
    ...testCoreDeps(contracts.deployment),
    ...deps,
  }).catch((error: unknown) => {
    dir.remove();
    throw error;
  });
  return {
    core,
    contracts,
    clock,
    config,
    stop: async () => {
      await core.close();
      dir.remove();
    },
  };
}

export interface JsonResponse {
  status: number;
  headers: Headers;
  /** Parsed JSON body, or the raw text when it is not JSON, or undefined when empty. */
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

export async function request(
  baseUrl: string,
  method: string,
  path: string,
  options: { json?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
): Promise<JsonResponse> {
  const headers: Record<string, string> = { ...options.headers };
  let body: string | undefined;
  if (options.rawBody !== undefined) {
    body = options.rawBody;
    headers["content-type"] ??= "application/json";
  } else if (options.json !== undefined) {
    body = JSON.stringify(options.json);
    headers["content-type"] = "application/json";
  }
  const response = await fetch(baseUrl + path, { method, headers, body });
  const text = await response.text();
  let parsed: unknown = undefined;
  if (text !== "") {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = text;
    }
  }
  return { status: response.status, headers: response.headers, body: parsed };
}

export function post(baseUrl: string, path: string, json?: unknown, headers?: Record<string, string>) {
  return request(baseUrl, "POST", path, { json, headers });
}

export interface NonceBody {
  nonce: string;
  siwe: {
    domain: string;
    uri: string;
    chain_id: number;
    statement: string;
    expiration: string;
    issued_at: string;
  };
}

/** The EIP-4361 message a wallet builds from a nonce response; `changes` override single fields. */
export function siweMessageFor(
  address: string,
  template: NonceBody,
  changes: Partial<SiweMessage> = {},
): string {
  return new SiweMessage({
    domain: template.siwe.domain,
    address,
    statement: template.siwe.statement,
    uri: template.siwe.uri,
    version: "1",
    chainId: template.siwe.chain_id,
    nonce: template.nonce,
    issuedAt: template.siwe.issued_at,
    expirationTime: template.siwe.expiration,
    ...changes,
  }).prepareMessage();
}

export async function requestNonce(baseUrl: string, address: string): Promise<NonceBody> {
  const response = await post(baseUrl, "/auth/nonce", { address });
  if (response.status !== 200)
    throw new Error(`nonce failed: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body as NonceBody;
}

export interface Tokens {
  access_token: string;
  refresh_token: string;
  expires_in: number;
}

/** Full sign-in: nonce → message → wallet signature → tokens. */
export async function signIn(baseUrl: string, wallet: Wallet): Promise<Tokens> {
  const template = await requestNonce(baseUrl, wallet.address);
  const message = siweMessageFor(wallet.address, template);
  const signature = await wallet.signMessage(message);
  const response = await post(baseUrl, "/auth/verify", { address: wallet.address, message, signature });
  if (response.status !== 200)
    throw new Error(`sign-in failed: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body as Tokens;
}
