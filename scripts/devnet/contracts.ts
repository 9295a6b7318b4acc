/**
 * Devnet chain setup: deploys Surety with `deploySurety` (devnet BLS key,
 * two test tokens, short timings, the bond floor on), funds the dev accounts
 * with test tokens, posts the operator bond in every asset and writes the
 * deployment record (with the services' URLs) for Core, the CLI and the
 * examples.
 */
import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import { JsonRpcProvider, type Signer, Wallet, parseUnits } from "ethers";
import { blsKeyFromSecret } from "../../sdk/bls";
import { Eip3009Token__factory, TestToken__factory } from "../../typechain-types";
import {
  DEV_TEST_TOKENS,
  DEVNET_BLS_IKM,
  type DeploymentRecord,
  type SuretyDeployment,
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
  /** The official x402 `exact` facilitator (`--with-exact` only). */
  exact?: string;
}

/**
 * The EIP-3009 test token of `--with-exact` (contracts/test/Eip3009Token.sol): what x402's `exact` scheme
 * settles with `transferWithAuthorization`. `name` and `version` are its EIP-712 domain, the `extra` of
 * an `exact` price (`{ asset: address, amount, extra: { name, version } }`).
 */
export interface DevnetExactToken {
  name: string;
  symbol: string;
  version: string;
  decimals: number;
  address: string;
  blockNumber: number;
}

/** deployments/<network>.json as the devnet writes it: the deploy script's record plus where the services run. */
export interface DevnetDeploymentFile extends DeploymentRecord {
  network: string;
  urls: DevnetUrls;
  /** With `--with-exact`: the EIP-3009 token the `exact` facilitator settles (not a Surety collateral token). */
  exactToken?: DevnetExactToken;
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

/** The devnet operator bond in ETH (posted by the deployer; the ClearingHouse pays voided debits from it). */
export const DEVNET_ETH_BOND = parseUnits("10", 18);
const ETH_ASSET = "0x0000000000000000000000000000000000000000";
/**
 * The devnet's bond floor (`ClearingHouse.bondFloorBps`): 10 % of each cycle's total debit per asset, so the
 * floor is exercised out of the box while the bonds below cover cycles far larger than any demo (100 ETH,
 * 1,000,000 tUSD, 1,000 tETH of total debit per cycle). Production deployments default to full cover
 * (scripts/deploy.ts DEFAULT_BOND_FLOOR_BPS).
 */
export const DEVNET_BOND_FLOOR_BPS = 1_000;
/** Whole tokens of operator bond the deployer mints itself and posts, per test token symbol. */
export const DEVNET_TOKEN_BONDS: Readonly<Record<string, string>> = { tUSD: "100000", tETH: "100" };

export async function deployDevnetContracts(
  provider: JsonRpcProvider,
  timings: Timings,
): Promise<ChainSetupResult> {
  const deployer = new Wallet(devAccount(DEVNET_ROLES.deployer).privateKey, provider);
  const deployment = await deploySurety(deployer, {
    operator: devAccount(DEVNET_ROLES.operator).address,
    guardian: devAccount(DEVNET_ROLES.guardian).address,
    operatorBlsPublicKey: blsKeyFromSecret(DEVNET_BLS_IKM, "DEVNET_BLS_IKM").publicKey,
    timings,
    testTokens: DEV_TEST_TOKENS,
    bondFloorBps: DEVNET_BOND_FLOOR_BPS,
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
  await postDevnetBonds(deployment, deployer);
  return { record: deployment.record, grants };
}

/**
 * Posts the devnet operator bond in every asset with `signer` (minting itself the test tokens it posts), so
 * that a debit voided by an unanswered challenge still pays its creditors and Core's commits pass the bond
 * floor (docs/clearing.md "Challenges, veto and bond"). Also used by the end-to-end fixtures.
 */
export async function postDevnetBonds(
  deployment: Pick<SuretyDeployment, "clearingHouse" | "testTokens">,
  signer: Signer,
): Promise<void> {
  const clearingHouse = deployment.clearingHouse.connect(signer);
  const chAddress = await clearingHouse.getAddress();
  await (await clearingHouse.postBond(ETH_ASSET, 0, { value: DEVNET_ETH_BOND })).wait();
  for (const token of deployment.testTokens) {
    const [symbol, decimals] = await Promise.all([token.symbol(), token.decimals()]);
    const amount = parseUnits(DEVNET_TOKEN_BONDS[symbol] ?? "0", decimals);
    if (amount === 0n) continue;
    const asSigner = TestToken__factory.connect(await token.getAddress(), signer);
    await (await asSigner.mint(await signer.getAddress(), amount)).wait();
    await (await asSigner.approve(chAddress, amount)).wait();
    await (await clearingHouse.postBond(await token.getAddress(), amount)).wait();
  }
}

/** The EIP-3009 token of `--with-exact`: its EIP-712 domain name and version, symbol, and the grant per account. */
export const DEVNET_EXACT_TOKEN = {
  name: "Exact USD",
  symbol: "xUSD",
  version: "2",
  grant: "1000000",
} as const;

/**
 * `--with-exact`: deploys the EIP-3009 test token (contracts/test/Eip3009Token.sol, 18 decimals) from the
 * deployer and mints {@link DEVNET_EXACT_TOKEN}.grant whole tokens to every funded dev account.
 */
export async function deployExactToken(provider: JsonRpcProvider): Promise<DevnetExactToken> {
  const deployer = new Wallet(devAccount(DEVNET_ROLES.deployer).privateKey, provider);
  const token = await new Eip3009Token__factory(deployer).deploy(
    DEVNET_EXACT_TOKEN.name,
    DEVNET_EXACT_TOKEN.symbol,
  );
  const receipt = await token.deploymentTransaction()!.wait();
  const [decimals, version] = await Promise.all([token.decimals(), token.version()]);
  const amount = parseUnits(DEVNET_EXACT_TOKEN.grant, decimals);
  for (const account of devAccounts(FUNDED_ACCOUNT_COUNT)) {
    await (await token.mint(account.address, amount)).wait();
  }
  return {
    name: DEVNET_EXACT_TOKEN.name,
    symbol: DEVNET_EXACT_TOKEN.symbol,
    version,
    decimals: Number(decimals),
    address: await token.getAddress(),
    blockNumber: receipt!.blockNumber,
  };
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
  exactToken?: DevnetExactToken,
): DevnetDeploymentFile {
  const content: DevnetDeploymentFile = {
    network: "localhost",
    ...record,
    urls,
    ...(exactToken === undefined ? {} : { exactToken }),
  };
  mkdirSync(path.dirname(file), { recursive: true });
  const temp = deploymentTempFile(file);
  writeFileSync(temp, JSON.stringify(content, null, 2) + "\n");
  renameSync(temp, file);
  return content;
}
