/**
 * Guarantee fixtures for Core tests: fixed wallets, the test deployment's
 * EIP-712 domain, claim builders and real payer signatures (ethers wallets
 * through the sdk's signGuarantee).
 */
import { keccak256, toUtf8Bytes, Wallet } from "ethers";
import type { GuaranteeClaims, GuaranteeClaimsV1, GuaranteeClaimsV2, SigningScheme } from "../../sdk/claims";
import { toWireSignedGuarantee, type WireSignedGuarantee } from "../../sdk/claims";
import { type GuaranteeDomainParams, SECP256K1_N, signGuarantee } from "../../sdk/eip712";
import { ZERO_ADDRESS } from "../../sdk/wire";
import { post, T0, TEST_CHAIN_ID, TEST_DEPLOYMENT } from "./helpers";

// Hardhat dev accounts: fixed keys keep failures reproducible.
export const payer = new Wallet("0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80");
export const recipient = new Wallet("0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d");
export const facilitator = new Wallet("0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a");
export const stranger = new Wallet("0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6");

export const TUSD = TEST_DEPLOYMENT.tokens[0].address;
export const TETH = TEST_DEPLOYMENT.tokens[1].address;
export const REGISTRY = TEST_DEPLOYMENT.trustedRegistries[0];
/** A second registry the tests' Core trusts through config (to tamper the signed registry field). */
export const OTHER_REGISTRY = "0x8A791620dd6260079BF849Dc5567aDC3F2FdC318";
export const VALIDATOR = "0x15d34AAf54267DB7D7c367839AAf71A00a2C6A65";
export const UNKNOWN_TOKEN = "0x2279B7A0a67DB372996a5FaB50D91eAA73d2eBe6";

export const DOMAIN: GuaranteeDomainParams = {
  name: "Surety",
  version: "1",
  chainId: TEST_CHAIN_ID,
  verifyingContract: TEST_DEPLOYMENT.vault,
};

export function v1Claims(changes: Partial<GuaranteeClaimsV1> = {}): GuaranteeClaimsV1 {
  return {
    version: 1,
    user: payer.address,
    recipient: recipient.address,
    reqId: 1n,
    amount: 1_000n,
    asset: ZERO_ADDRESS,
    timestamp: T0,
    ...changes,
  };
}

export function v2Claims(
  changes: Partial<Omit<GuaranteeClaimsV2, "policy">> = {},
  policy: Partial<GuaranteeClaimsV2["policy"]> = {},
): GuaranteeClaimsV2 {
  return {
    ...v1Claims(),
    ...changes,
    version: 2,
    policy: {
      registry: REGISTRY,
      validator: VALIDATOR,
      agentId: 7n,
      minScore: 80,
      jobHash: keccak256(toUtf8Bytes("job-1")),
      tag: "quality",
      deadline: T0 + 3_600,
      ...policy,
    },
  };
}

export async function signedBody(
  claims: GuaranteeClaims,
  scheme: SigningScheme = "eip712",
  signer: Wallet = payer,
): Promise<WireSignedGuarantee> {
  const signature = await signGuarantee(signer, DOMAIN, claims, scheme);
  return toWireSignedGuarantee({ claims, signature: signature.toLowerCase(), scheme });
}

/** The malleable twin (r, n − s, flipped v) of a low-s signature: same signer, rejected as high-s. */
export function highS(signature: string): string {
  const bytes = Buffer.from(signature.slice(2), "hex");
  const s = BigInt("0x" + bytes.subarray(32, 64).toString("hex"));
  const twin = (SECP256K1_N - s).toString(16).padStart(64, "0");
  Buffer.from(twin, "hex").copy(bytes, 32);
  bytes[64] = bytes[64] === 27 ? 28 : 27;
  return "0x" + bytes.toString("hex");
}

export function bearer(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}` };
}

export function issue(url: string, token: string, body: unknown) {
  return post(url, "/core/guarantees", body, bearer(token));
}
