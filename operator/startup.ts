/**
 * Checks Core runs before it accepts a request: the configured chain, the
 * deployment file and the node agree on the chain id, and the BLS key Core
 * signs certificates with is the one the Vault verifies them with. A Core
 * whose key differs from the Vault's would issue certificates that no
 * contract accepts, so it refuses to start. Nor does it start on the slow
 * pure-JavaScript BLS signer unless told to ({@link checkBlsBackend}).
 */
import { blsBackend, publicKeyToEip2537 } from "../sdk/bls";
import { GuaranteeHasher } from "../sdk/eip712";
import type { ChainGateway } from "./chain";
import type { OperatorConfig } from "./config";
import type { DeploymentInfo } from "./deployment";

/** Core must not start; the message says what disagrees and how to fix it. */
export class StartupError extends Error {
  override readonly name = "StartupError";
}

/**
 * `enforce` (production default) reads the key from the Vault.
 * `skip` is for tests and tools that run Core without a deployed Vault.
 */
export type VaultKeyCheck = "enforce" | "skip";

/**
 * Refuses to start when certificates would be signed by the pure-JavaScript fallback (sdk/bls.ts picks
 * `noble` when the native addon native/blst-minsig is not built or does not load: a `node_modules` copied
 * rather than installed, a failed build), unless `allowSlowBls` (`SURETY_ALLOW_SLOW_BLS`) says so. The
 * fallback signs the same bytes ≈ 40 certificates/s, a few tens of milliseconds added to every paid
 * request: a Core running on it unnoticed is a silent slow path. `backend` is for tests.
 */
export function checkBlsBackend(
  config: Pick<OperatorConfig, "allowSlowBls">,
  backend: "blst" | "noble" = blsBackend(),
): void {
  if (backend === "blst" || config.allowSlowBls) return;
  throw new StartupError(
    "the native BLS signer (native/blst-minsig) is not built or does not load, so certificates would be " +
      "signed by the pure-JavaScript fallback (@noble/curves, about 40 certificates/s). Build it: " +
      "`npm rebuild` (or `npm run postinstall`) in the repository, with python3, make and a C compiler; " +
      "or set SURETY_ALLOW_SLOW_BLS=true to start on the fallback anyway (tests, development)",
  );
}

function hex(bytes: Uint8Array): string {
  return "0x" + Buffer.from(bytes).toString("hex");
}

export async function checkChainAndDeployment(
  config: Pick<OperatorConfig, "chainId" | "rpcUrl" | "deploymentFile" | "eip712Name" | "eip712Version">,
  deployment: DeploymentInfo,
  chain: ChainGateway,
  operatorPublicKey: Uint8Array,
  vaultKeyCheck: VaultKeyCheck,
): Promise<void> {
  if (deployment.chainId !== config.chainId) {
    throw new StartupError(
      `deployment file ${config.deploymentFile} is for chain ${deployment.chainId}, but SURETY_CHAIN_ID is ${config.chainId}`,
    );
  }
  let nodeChainId: number;
  try {
    nodeChainId = await chain.chainId();
  } catch (error) {
    throw new StartupError(`cannot read the chain id from ${config.rpcUrl}: ${(error as Error).message}`);
  }
  if (nodeChainId !== config.chainId) {
    throw new StartupError(
      `the node at ${config.rpcUrl} is on chain ${nodeChainId}, but SURETY_CHAIN_ID is ${config.chainId}`,
    );
  }
  if (vaultKeyCheck === "skip") return;
  let onChain;
  try {
    onChain = await chain.vaultOperatorKey(deployment.vault);
  } catch (error) {
    throw new StartupError(`cannot read the operator key from the Vault: ${(error as Error).message}`);
  }
  const expected = hex(operatorPublicKey);
  if (!onChain.set) {
    throw new StartupError(
      `the Vault at ${deployment.vault} has no operator BLS key; set it (KEY_MANAGER_ROLE: Vault.setOperatorKey; after setup ` +
        `a first call schedules it and a second one after the timelock delay sets it) ` +
        `to Core's key ${expected} (EIP-2537: ${JSON.stringify(publicKeyToEip2537(operatorPublicKey))})`,
    );
  }
  if (hex(onChain.publicKey) !== expected) {
    throw new StartupError(
      `Core's BLS key ${expected} (from SURETY_BLS_SECRET) is not the Vault's operator key ${hex(onChain.publicKey)}: ` +
        "certificates would not verify on chain; fix SURETY_BLS_SECRET or rotate the Vault's key",
    );
  }
  // The Vault checks payers' signatures under its own EIP-712 domain (name "Surety", version "1"): a Core
  // configured with another name or version would accept signatures that can never be remunerated.
  let onChainDomain: string;
  try {
    onChainDomain = await chain.vaultGuaranteeDomainSeparator(deployment.vault);
  } catch (error) {
    throw new StartupError(`cannot read the EIP-712 domain from the Vault: ${(error as Error).message}`);
  }
  const ours = new GuaranteeHasher({
    name: config.eip712Name,
    version: config.eip712Version,
    chainId: config.chainId,
    verifyingContract: deployment.vault,
  }).domainSeparator.toLowerCase();
  if (ours !== onChainDomain) {
    throw new StartupError(
      `Core's EIP-712 domain (SURETY_EIP712_NAME "${config.eip712Name}", SURETY_EIP712_VERSION ` +
        `"${config.eip712Version}") is not the Vault's (${onChainDomain}): payers' signatures would not ` +
        `verify on chain; the Vault's domain is name "Surety", version "1"`,
    );
  }
  // Until finishSetup, role grants and operator key changes take effect at once: not a Vault to hold
  // payers' money (docs/contracts.md, "Timelocked grants and changes").
  let setupFinished: boolean;
  try {
    setupFinished = await chain.vaultSetupFinished(deployment.vault);
  } catch (error) {
    throw new StartupError(`cannot read the Vault's setup state: ${(error as Error).message}`);
  }
  if (!setupFinished) {
    throw new StartupError(
      `the Vault at ${deployment.vault} is still in setup: role grants and key changes would take effect at ` +
        "once; the default admin must call Vault.finishSetup() (deploySurety does it last)",
    );
  }
}
