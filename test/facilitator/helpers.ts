/**
 * Fixtures for the facilitator tests: deployment parameters built through the
 * same parser that reads Core's public params, payers that really sign
 * (ethers Wallets + the sdk's signGuarantee), x402 v1/v2 bodies, and a
 * facilitator on a free port with a manual clock.
 */
import { Wallet } from "ethers";
import { blsKeyFromSecret, publicKeyToArray } from "../../sdk/bls";
import {
  type GuaranteeClaims,
  type GuaranteeClaimsV2,
  type SignedGuarantee,
  type SigningScheme,
  type ValidationPolicy,
  toWireSignedGuarantee,
} from "../../sdk/claims";
import { signGuarantee } from "../../sdk/eip712";
import { VALIDATION_HASH_CANONICALIZATION_VERSION, certificateDomain } from "../../sdk/ids";
import { type X402Version, SCHEME, extraFromPolicy } from "../../sdk/x402";
import { ManualClock } from "../../facilitator/clock";
import {
  type FacilitatorConfig,
  type FacilitatorConfigInput,
  facilitatorConfigFromObject,
} from "../../facilitator/config";
import { type DeploymentParams, deploymentFromPublicParams } from "../../facilitator/deployment";
import type { WirePublicParams } from "../../sdk/public-params";
import { silentFacilitatorLogger } from "../../facilitator/logger";
import {
  type FacilitatorServer,
  type FacilitatorServerDeps,
  startFacilitatorServer,
} from "../../facilitator/server";

/** A fixed "now": claim timestamps and deadlines are relative to it. */
export const T0 = 1_750_000_000;
export const CHAIN_ID = 31337;
export const NETWORK = `eip155:${CHAIN_ID}`;
export const VAULT = "0x5FbDB2315678afecb367f032d93F642f64180aa3";
export const TOKEN = "0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512";
export const REGISTRY = "0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0";
export const VALIDATOR = "0xCf7Ed3AccA5a467e9e704C703E8D87F634fB0Fc9";
export const ETH = "0x0000000000000000000000000000000000000000";

export const payer = new Wallet("0x" + "11".repeat(32));
export const stranger = new Wallet("0x" + "22".repeat(32));
export const seller = new Wallet("0x" + "33".repeat(32));
export const facilitatorWallet = new Wallet("0x" + "44".repeat(32));
export const coreBls = blsKeyFromSecret("0x" + "55".repeat(32));

/** Core's public params for the test deployment, as Core would serve them. */
export function publicParams(overrides: Partial<WirePublicParams> = {}): WirePublicParams {
  const chainId = overrides.chain_id ?? CHAIN_ID;
  const vault = overrides.contract_address ?? VAULT;
  return {
    public_key: publicKeyToArray(coreBls.publicKey),
    contract_address: vault,
    ethereum_http_rpc_url: "http://127.0.0.1:8545",
    eip712_name: "Surety",
    eip712_version: "1",
    chain_id: chainId,
    max_accepted_guarantee_version: 2,
    accepted_guarantee_versions: [1, 2],
    active_guarantee_domain_separator: certificateDomain({ chainId, vault }),
    trusted_validation_registries: [REGISTRY],
    validation_hash_canonicalization_version: VALIDATION_HASH_CANONICALIZATION_VERSION,
    clearing_house_address: "0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0",
    protocol_timings: null,
    latest_validation_deadline: null,
    ...overrides,
  };
}

export function testDeployment(overrides: Partial<WirePublicParams> = {}): DeploymentParams {
  return deploymentFromPublicParams(publicParams(overrides));
}

let nextReqId = 1n;

export function v1Claims(overrides: Partial<GuaranteeClaims> = {}): GuaranteeClaims {
  return {
    version: 1,
    user: payer.address,
    recipient: seller.address,
    reqId: nextReqId++,
    amount: 1_000_000n,
    asset: TOKEN,
    timestamp: T0 - 5,
    ...overrides,
  } as GuaranteeClaims;
}

export function testPolicy(overrides: Partial<ValidationPolicy> = {}): ValidationPolicy {
  return {
    registry: REGISTRY,
    validator: VALIDATOR,
    agentId: 7n,
    minScore: 80,
    jobHash: "0x" + "ab".repeat(32),
    tag: "quality",
    deadline: T0 + 3600,
    ...overrides,
  };
}

export function v2Claims(
  overrides: Partial<GuaranteeClaimsV2> = {},
  policy: ValidationPolicy = testPolicy(),
): GuaranteeClaimsV2 {
  return { ...(v1Claims() as object), version: 2, policy, ...overrides } as GuaranteeClaimsV2;
}

export async function sign(
  claims: GuaranteeClaims,
  scheme: SigningScheme = "eip712",
  wallet: Wallet = payer,
  deployment: DeploymentParams = testDeployment(),
): Promise<SignedGuarantee> {
  return { claims, scheme, signature: await signGuarantee(wallet, deployment.hasher, claims, scheme) };
}

/** Wire requirements a seller would publish for `claims` (v1: `maxAmountRequired`, v2: `amount`). */
export function requirementsFor(
  claims: GuaranteeClaims,
  x402Version: X402Version,
  overrides: Record<string, unknown> = {},
): Record<string, unknown> {
  const extra = claims.version === 2 ? extraFromPolicy(claims.policy) : null;
  const common = {
    scheme: SCHEME,
    network: NETWORK,
    payTo: claims.recipient,
    asset: claims.asset,
    maxTimeoutSeconds: 60,
    extra,
  };
  const versioned =
    x402Version === 1
      ? {
          maxAmountRequired: claims.amount.toString(),
          resource: "https://seller.test/report",
          description: "a report",
          mimeType: "application/json",
        }
      : { amount: claims.amount.toString() };
  return { ...common, ...versioned, ...overrides };
}

/** The payment payload a buyer sends (v2: `accepted` = the chosen requirements). */
export function payloadFor(
  signed: SignedGuarantee,
  x402Version: X402Version,
  accepted: Record<string, unknown> = requirementsFor(signed.claims, x402Version),
): Record<string, unknown> {
  const payload = toWireSignedGuarantee(signed);
  if (x402Version === 1) return { x402Version: 1, scheme: SCHEME, network: NETWORK, payload };
  return { x402Version: 2, accepted, payload, resource: { url: "https://seller.test/report" } };
}

/** A `/verify` or `/settle` body whose requirements match the signed claims. */
export function bodyFor(
  signed: SignedGuarantee,
  x402Version: X402Version,
  requirementOverrides: Record<string, unknown> = {},
): Record<string, unknown> {
  const requirements = requirementsFor(signed.claims, x402Version, requirementOverrides);
  return {
    x402Version,
    paymentPayload: payloadFor(signed, x402Version, requirements),
    paymentRequirements: requirements,
  };
}

export function facilitatorConfig(overrides: FacilitatorConfigInput = {}): FacilitatorConfig {
  return facilitatorConfigFromObject({
    host: "127.0.0.1",
    port: 0,
    logLevel: "silent",
    privateKey: facilitatorWallet.privateKey,
    // Nothing listens here unless a test starts a Core and overrides it.
    coreUrl: "http://127.0.0.1:9",
    coreTimeoutMs: 2000,
    ...overrides,
  });
}

export interface TestFacilitator {
  server: FacilitatorServer;
  clock: ManualClock;
  url: string;
  stop(): Promise<void>;
}

/** A facilitator on a free port with a manual clock at {@link T0} and (by default) the pinned test deployment. */
export async function startTestFacilitator(
  overrides: FacilitatorConfigInput = {},
  deps: FacilitatorServerDeps = { deployment: testDeployment() },
): Promise<TestFacilitator> {
  const clock = new ManualClock(T0);
  const server = await startFacilitatorServer(facilitatorConfig(overrides), {
    clock,
    logger: silentFacilitatorLogger(),
    ...deps,
  });
  return { server, clock, url: server.url, stop: () => server.close() };
}

export interface JsonResponse {
  status: number;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

export async function request(
  url: string,
  method: string,
  options: { json?: unknown; raw?: string; contentType?: string; headers?: Record<string, string> } = {},
): Promise<JsonResponse> {
  const headers: Record<string, string> = { ...options.headers };
  let body: string | undefined;
  if (options.raw !== undefined) body = options.raw;
  else if (options.json !== undefined) body = JSON.stringify(options.json);
  if (body !== undefined) headers["content-type"] = options.contentType ?? "application/json";
  const response = await fetch(url, { method, headers, body });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // keep the text
  }
  return { status: response.status, body: parsed };
}

export function post(url: string, json: unknown): Promise<JsonResponse> {
  return request(url, "POST", { json });
}
