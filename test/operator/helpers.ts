/**
 * Test fixtures for the operator: a config for a temp directory, a Core on
 * a free port with a manual clock, a small JSON HTTP client and the SIWE
 * sign-in dance with a real wallet. The chain is Hardhat's in-process
 * network (`ethers.provider`) behind the RpcChainGateway.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Wallet } from "ethers";
import { ethers } from "hardhat";
import { SiweMessage } from "siwe";
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

/**
 * The deployment Core is started with. The contracts are not deployed by
 * these tests (issuance and reads never call them), so the addresses are
 * fixed placeholders in the shape `scripts/deploy.ts` writes.
 * TODO(contracts merge): deploy with `deploySurety` and use its record, and
 * run Core with the Vault key check enforced.
 */
export const TEST_DEPLOYMENT_JSON = {
  network: "hardhat",
  chainId: 31337,
  contracts: {
    Vault: { address: "0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512", blockNumber: 2 },
    ClearingHouse: { address: "0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0", blockNumber: 3 },
    ValidationRegistry: { address: "0x5FbDB2315678afecb367f032d93F642f64180aa3", blockNumber: 1 },
  },
  config: { trustedRegistries: ["0x5FbDB2315678afecb367f032d93F642f64180aa3"] },
  tokens: [
    { address: "0x0165878A594ca255338adfa4d48449f69242Eb8F", name: "Test USD", symbol: "tUSD", decimals: 6 },
    {
      address: "0xa513E6E4b8f2a923D98304ec87F64353C4D5C853",
      name: "Test Ether",
      symbol: "tETH",
      decimals: 18,
    },
  ],
};
export const TEST_DEPLOYMENT: DeploymentInfo = parseDeployment(TEST_DEPLOYMENT_JSON);

/** The in-process Hardhat chain behind Core's gateway interface. */
export function hardhatChain(timeoutMs = 2_000): ChainGateway {
  return new RpcChainGateway(ethers.provider, { timeoutMs });
}

/** Deps every test Core needs besides config: the test deployment and the Hardhat chain. */
export function testCoreDeps(): Pick<CoreServerDeps, "deployment" | "chain" | "vaultKeyCheck"> {
  return { deployment: TEST_DEPLOYMENT, chain: hardhatChain(), vaultKeyCheck: "skip" };
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
    blsSecret: "0x" + "42".repeat(32),
    siweDomain: TEST_DOMAIN,
    siweUri: TEST_URI,
    siweStatement: "Sign in to Surety Core (test).",
    ...overrides,
  });
}

export interface TestCore {
  core: CoreServer;
  clock: ManualClock;
  config: OperatorConfig;
  stop(): Promise<void>;
}

/** A Core on a free port over a SQLite file in a temp dir; `stop()` closes it and removes the dir. */
export async function startTestCore(
  overrides: OperatorConfigInput = {},
  deps: Omit<CoreServerDeps, "clock" | "logger"> = {},
): Promise<TestCore> {
  const dir = tempDir();
  const config = testConfig(dir.path, overrides);
  const clock = new ManualClock(T0);
  const core = await startCoreServer(config, { clock, logger: silentLogger(), ...testCoreDeps(), ...deps });
  return {
    core,
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
