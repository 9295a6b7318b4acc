/**
 * Devnet chain setup: deploys Surety with `deploySurety` (devnet BLS key,
 * two test tokens, short timings), funds the dev accounts with test tokens
 * and writes the deployment record (with the services' URLs) for Core, the
 * CLI and the examples.
 */
import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import { JsonRpcProvider, Wallet, parseUnits } from "ethers";
import { blsKeyFromSecret } from "../../sdk/bls";
import { TestToken__factory } from "../../typechain-types";
import {
  DEV_TEST_TOKENS,
  DEVNET_BLS_IKM,
  type DeploymentRecord,
  type Timings,
  deploySurety,
} from "../deploy";
import { DEVNET_ROLES, FUNDED_ACCOUNT_COUNT, devAccount, devAccounts } from "./accounts";

/** Whole tokens minted to every funded dev account, per test token symbol. */
export const DEV_TOKEN_GRANTS: Readonly<Record<string, string>> = { tUSD: "1000000", tETH: "1000" };

export interface DevnetUrls {
  rpc: string;
  core: string;
  facilitator: string;
}

/** deployments/<network>.json as the devnet writes it: the deploy script's record plus where the services run. */
export interface DevnetDeploymentFile extends DeploymentRecord {
  network: string;
  urls: DevnetUrls;
}

export interface ChainSetupResult {
  record: DeploymentRecord;
  /** Token symbol → whole tokens minted to each funded account. */
  grants: Record<string, string>;
}

/** A provider that does not probe the network again and polls receipts quickly (the node automines). */
export function devnetProvider(rpcUrl: string, chainId: number): JsonRpcProvider {
  // No response cache: a cached `eth_getTransactionCount` would hand two back-to-back transactions one nonce.
  const provider = new JsonRpcProvider(rpcUrl, chainId, { staticNetwork: true, cacheTimeout: -1 });
  provider.pollingInterval = 50;
  return provider;
}

export async function deployDevnetContracts(
  provider: JsonRpcProvider,
  timings: Timings,
): Promise<ChainSetupResult> {
  const deployer = new Wallet(devAccount(DEVNET_ROLES.deployer).privateKey, provider);
  const deployment = await deploySurety(deployer, {
    operator: devAccount(DEVNET_ROLES.operator).address,
    operatorBlsPublicKey: blsKeyFromSecret(DEVNET_BLS_IKM, "DEVNET_BLS_IKM").publicKey,
    timings,
    testTokens: DEV_TEST_TOKENS,
  });
  const grants: Record<string, string> = {};
  for (const token of deployment.testTokens) {
    const [symbol, decimals] = await Promise.all([token.symbol(), token.decimals()]);
    const whole = DEV_TOKEN_GRANTS[symbol] ?? "1000";
    grants[symbol] = whole;
    const amount = parseUnits(whole, decimals);
    for (const account of devAccounts(FUNDED_ACCOUNT_COUNT)) {
      await (
        await TestToken__factory.connect(await token.getAddress(), deployer).mint(account.address, amount)
      ).wait();
    }
  }
  return { record: deployment.record, grants };
}

/** The temp file `writeDevnetDeployment` writes before renaming it (left behind only by a crash). */
export function deploymentTempFile(file: string, pid: number = process.pid): string {
  return `${file}.${pid}.tmp`;
}

/** Writes the record atomically (temp file + rename): a reader never sees half a file. */
export function writeDevnetDeployment(
  file: string,
  record: DeploymentRecord,
  urls: DevnetUrls,
): DevnetDeploymentFile {
  const content: DevnetDeploymentFile = { network: "localhost", ...record, urls };
  mkdirSync(path.dirname(file), { recursive: true });
  const temp = deploymentTempFile(file);
  writeFileSync(temp, JSON.stringify(content, null, 2) + "\n");
  renameSync(temp, file);
  return content;
}
