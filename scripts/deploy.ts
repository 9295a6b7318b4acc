/**
 * Deploys and wires Surety's contracts: ValidationRegistry, GuaranteeVerifier, the Vault's and the
 * ClearingHouse's logic libraries, Vault, ClearingHouse (+ TestTokens on dev networks); the one place that
 * knows the wiring (docs/contracts.md, "The contracts at a glance"). `deploySurety` is reusable (tests, devnet script); running this file with
 * `npx hardhat run scripts/deploy.ts --network <name>` deploys and writes `deployments/<network>.json`.
 *
 * Environment for the hardhat-run entry:
 *   SURETY_OPERATOR_BLS_PUBLIC_KEY  96-byte compressed G2 key (hex), or
 *   SURETY_OPERATOR_BLS_IKM         key material the key is derived from (hex, >= 32 bytes);
 *                                   on hardhat/localhost the public DEVNET_BLS_IKM is the fallback.
 *   SURETY_OPERATOR_ADDRESS         account given the ClearingHouse operator role (default: deployer).
 *   SURETY_GUARDIAN_ADDRESS         account given the ClearingHouse guardian role, i.e. vetoes cycles
 *                                   (default: the admin); keep it off the operator's key.
 *   SURETY_ADMIN_ADDRESS            account given the admin roles (default: deployer); it must then
 *                                   accept the Vault's default admin role (see handOverVaultRoles).
 *   SURETY_ADMIN_TRANSFER_DELAY     seconds a default-admin transfer waits before it can be accepted
 *                                   (default DEFAULT_ADMIN_TRANSFER_DELAY).
 *   SURETY_TOKENS                   comma-separated ERC-20 addresses to allow-list.
 *   SURETY_TIMINGS                  JSON object overriding DEFAULT_TIMINGS (seconds).
 *   SURETY_BOND_FLOOR_BPS           the ClearingHouse bond floor in basis points of each cycle's total debit
 *                                   per asset, 0..10000 (default: DEFAULT_BOND_FLOOR_BPS, full cover, on
 *                                   any network but hardhat/localhost, where it is 0; the devnet sets its own).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { getBytes, type ContractRunner, type Signer } from "ethers";
import type { HardhatRuntimeEnvironment } from "hardhat/types";

import { blsKeyFromSecret, publicKeyToEip2537, type Eip2537G2Point } from "../sdk/bls";
import {
  ClearingHouse__factory,
  CycleCommitLogic__factory,
  DisputeLogic__factory,
  PayoutLogic__factory,
  GuaranteeVerifier__factory,
  RemunerationLogic__factory,
  ReserveLogic__factory,
  TestToken__factory,
  ValidationRegistry__factory,
  Vault__factory,
  type ClearingHouse,
  type GuaranteeVerifier,
  type TestToken,
  type ValidationRegistry,
  type Vault,
} from "../typechain-types";

/** Protocol timings in seconds (the Vault owns all seven; see docs/protocol.md, grace-period invariant, and docs/clearing.md). */
export interface Timings {
  cycleLength: number;
  commitDelay: number;
  /** Challenges and the guardian's veto; an answer window of the same length follows it. */
  challengeWindow: number;
  paymentWindow: number;
  defaultWindow: number;
  withdrawalGracePeriod: number;
  /**
   * How far Core's view trails the chain head: about its `confirmations` × the chain's block time, plus one
   * block (Core reads the latest mined block). Counted in the grace-period invariant.
   */
  confirmationLag: number;
}

/**
 * Devnet defaults: a 60 s cycle, a block a second and Core at 0 confirmations (a 1 s lag); the grace
 * period exceeds the whole clearing path (60 + 30 + 1 + 2 × 30 + 120 + 60 = 331 s). On a public chain set
 * `confirmationLag` (SURETY_TIMINGS) to Core's confirmations × block time + one block.
 */
export const DEFAULT_TIMINGS: Timings = {
  cycleLength: 60,
  commitDelay: 30,
  challengeWindow: 30,
  paymentWindow: 120,
  defaultWindow: 60,
  withdrawalGracePeriod: 360,
  confirmationLag: 1,
};

/**
 * Public key material of the devnet operator, like Hardhat's public mnemonic: never use it on a network
 * holding value. The operator's devnet config derives the same key from it.
 */
export const DEVNET_BLS_IKM =
  "0x" + Buffer.from("surety devnet operator BLS key material, public!!").toString("hex");

/** TestTokens deployed on dev networks. */
export const DEV_TEST_TOKENS: readonly TestTokenSpec[] = [
  { name: "Test USD", symbol: "tUSD", decimals: 6 },
  { name: "Test Ether", symbol: "tETH", decimals: 18 },
];

const DEV_NETWORKS = new Set(["hardhat", "localhost"]);

/**
 * Bond floor of a production deployment (`ClearingHouse.bondFloorBps`, basis points): full cover. A commit
 * needs, per asset, a bond of at least the cycle's total debit, which keeps every creditor whole even if
 * every debit of the cycle is challenged and voided (docs/clearing.md "Bond sizing"). The operator posts the
 * bond before its first commit (`ClearingHouse.postBond`); the admin may lower the floor (`setBondFloor`),
 * accepting a first-come shortfall for the rest. `deploySurety` itself defaults to 0 (tests, tools).
 */
export const DEFAULT_BOND_FLOOR_BPS = 10_000;

/**
 * Seconds between `beginDefaultAdminTransfer` and the earliest `acceptDefaultAdminTransfer` on the Vault
 * and the ClearingHouse (OpenZeppelin AccessControlDefaultAdminRules): a leaked admin key cannot hand
 * the contracts over at once, and the current admin can cancel in the meantime.
 */
export const DEFAULT_ADMIN_TRANSFER_DELAY = 3 * 24 * 3600;

export interface TestTokenSpec {
  name: string;
  symbol: string;
  decimals: number;
}

export interface DeployOptions {
  /**
   * Receives every admin role (default: the deploying signer). The Vault's default admin role goes to it
   * in two steps: the deployer begins the transfer, `admin` calls `acceptDefaultAdminTransfer()` once
   * `adminTransferDelay` has passed (the record's `pendingAdminTransfer` says when).
   */
  admin?: string;
  /** Delay of every later default-admin transfer, seconds (default {@link DEFAULT_ADMIN_TRANSFER_DELAY}). */
  adminTransferDelay?: number;
  /** Receives the ClearingHouse operator role, i.e. commits cycles (default: the deploying signer). */
  operator?: string;
  /** Receives the ClearingHouse guardian role, i.e. vetoes cycles (default: `admin`). */
  guardian?: string;
  /** Operator BLS key: 96-byte compressed G2 (bytes or hex) or already in EIP-2537 form. Unset: no key. */
  operatorBlsPublicKey?: Uint8Array | string | Eip2537G2Point;
  /** Overrides of DEFAULT_TIMINGS. */
  timings?: Partial<Timings>;
  /** Existing ERC-20 tokens to allow-list. */
  tokens?: string[];
  /** TestTokens to deploy and allow-list (dev networks only). */
  testTokens?: readonly TestTokenSpec[];
  /** Extra trusted validation registries; the deployed ValidationRegistry is always trusted. */
  trustedRegistries?: string[];
  /** The ClearingHouse's initial bond floor in basis points, 0..10000 (default 0: off). */
  bondFloorBps?: number;
}

export interface DeployedContract {
  address: string;
  blockNumber: number;
}

export interface TokenInfo extends DeployedContract {
  name: string;
  symbol: string;
  decimals: number;
  /** True for a TestToken deployed by this script (freely mintable). */
  testToken: boolean;
}

/** What deploySurety returns: live contract handles plus the JSON-ready record. */
export interface SuretyDeployment {
  vault: Vault;
  guaranteeVerifier: GuaranteeVerifier;
  clearingHouse: ClearingHouse;
  validationRegistry: ValidationRegistry;
  testTokens: TestToken[];
  record: DeploymentRecord;
}

/** The content of deployments/<network>.json. */
export interface DeploymentRecord {
  chainId: number;
  contracts: {
    Vault: DeployedContract;
    ClearingHouse: DeployedContract;
    ValidationRegistry: DeployedContract;
    /** Stateless certificate and payer-signature checks, called by the Vault and the ClearingHouse. */
    GuaranteeVerifier: DeployedContract;
    /** External libraries linked into the Vault (they run in its context: its storage, events, address). */
    RemunerationLogic: DeployedContract;
    ReserveLogic: DeployedContract;
    /** The external libraries linked into the ClearingHouse. */
    CycleCommitLogic: DeployedContract;
    DisputeLogic: DeployedContract;
    PayoutLogic: DeployedContract;
  };
  config: {
    admin: string;
    /** Seconds a default-admin transfer waits before it can be accepted. */
    adminTransferDelay: number;
    /** The Vault's default admin role is still the deployer's until `admin` accepts it (null: nothing pending). */
    pendingAdminTransfer: { newAdmin: string; acceptableAfter: number } | null;
    operator: string;
    guardian: string;
    /** The ClearingHouse's bond floor at deployment (basis points; 0: off). */
    bondFloorBps: number;
    timings: Timings;
    operatorBlsPublicKey: Eip2537G2Point | null;
    trustedRegistries: string[];
  };
  tokens: TokenInfo[];
}

/** Deploys and wires everything with `signer`; every transaction is awaited (one block each on hardhat). */
export async function deploySurety(signer: Signer, options: DeployOptions = {}): Promise<SuretyDeployment> {
  const deployer = await signer.getAddress();
  const admin = options.admin ?? deployer;
  const operator = options.operator ?? deployer;
  const guardian = options.guardian ?? admin;
  const adminTransferDelay = options.adminTransferDelay ?? DEFAULT_ADMIN_TRANSFER_DELAY;
  const bondFloorBps = options.bondFloorBps ?? 0;
  const timings: Timings = { ...DEFAULT_TIMINGS, ...options.timings };
  const provider = requireProvider(signer);
  const chainId = Number((await provider.getNetwork()).chainId);

  const registry = await new ValidationRegistry__factory(signer).deploy();
  const registryAt = await deployedAt(registry);
  const verifier = await new GuaranteeVerifier__factory(signer).deploy();
  const verifierAt = await deployedAt(verifier);
  // The deployer administers until wiring is done, then hands the roles to `admin`.
  const vaultLibraries = await deployVaultLibraries(signer);
  const vault = await new Vault__factory(vaultLinks(vaultLibraries), signer).deploy(
    deployer,
    adminTransferDelay,
    timings,
    verifierAt.address,
  );
  const vaultAt = await deployedAt(vault);
  const clearingLibraries = await deployClearingHouseLibraries(signer);
  const clearingHouse = await new ClearingHouse__factory(
    clearingHouseLinks(clearingLibraries),
    signer,
  ).deploy(vaultAt.address, admin, operator, guardian, adminTransferDelay, bondFloorBps, verifierAt.address);
  const clearingHouseAt = await deployedAt(clearingHouse);

  await (await vault.setClearingHouse(await clearingHouse.getAddress())).wait();
  const key = options.operatorBlsPublicKey === undefined ? null : toEip2537(options.operatorBlsPublicKey);
  if (key) await (await vault.setOperatorKey(key)).wait();

  const trustedRegistries = [await registry.getAddress(), ...(options.trustedRegistries ?? [])];
  for (const trusted of trustedRegistries) await (await vault.setTrustedRegistry(trusted, true)).wait();

  const tokens: TokenInfo[] = [];
  const testTokens: TestToken[] = [];
  for (const spec of options.testTokens ?? []) {
    const token = await new TestToken__factory(signer).deploy(spec.name, spec.symbol, spec.decimals);
    const at = await deployedAt(token);
    testTokens.push(token);
    tokens.push({ ...at, ...spec, testToken: true });
  }
  for (const address of options.tokens ?? []) {
    const token = TestToken__factory.connect(address, signer); // only the ERC-20 metadata views are used
    const [name, symbol, decimals] = await Promise.all([token.name(), token.symbol(), token.decimals()]);
    tokens.push({ address, blockNumber: 0, name, symbol, decimals: Number(decimals), testToken: false });
  }
  for (const token of tokens) await (await vault.setTokenAllowed(token.address, true)).wait();

  if (admin !== deployer) await handOverVaultRoles(vault, deployer, admin);
  // Last: from here on role grants, key changes and new trusted registries wait `adminTransferDelay`.
  await (await vault.finishSetup()).wait();
  const pendingAdminTransfer = admin !== deployer ? await beginVaultAdminTransfer(vault, admin) : null;

  return {
    vault,
    guaranteeVerifier: verifier,
    clearingHouse,
    validationRegistry: registry,
    testTokens,
    record: {
      chainId,
      contracts: {
        Vault: vaultAt,
        ClearingHouse: clearingHouseAt,
        ValidationRegistry: registryAt,
        GuaranteeVerifier: verifierAt,
        RemunerationLogic: vaultLibraries.RemunerationLogic,
        ReserveLogic: vaultLibraries.ReserveLogic,
        CycleCommitLogic: clearingLibraries.CycleCommitLogic,
        DisputeLogic: clearingLibraries.DisputeLogic,
        PayoutLogic: clearingLibraries.PayoutLogic,
      },
      config: {
        admin,
        adminTransferDelay,
        pendingAdminTransfer,
        operator,
        guardian,
        bondFloorBps,
        timings,
        operatorBlsPublicKey: key,
        trustedRegistries,
      },
      tokens,
    },
  };
}

/** The Vault's logic libraries (deployed once; any number of Vaults may link them). */
export interface VaultLibraries {
  RemunerationLogic: DeployedContract;
  ReserveLogic: DeployedContract;
}

/** The ClearingHouse's logic libraries. */
export interface ClearingHouseLibraries {
  CycleCommitLogic: DeployedContract;
  DisputeLogic: DeployedContract;
  PayoutLogic: DeployedContract;
}

/** Deploys the libraries a Vault links. */
export async function deployVaultLibraries(signer: Signer): Promise<VaultLibraries> {
  return {
    RemunerationLogic: await deployedAt(await new RemunerationLogic__factory(signer).deploy()),
    ReserveLogic: await deployedAt(await new ReserveLogic__factory(signer).deploy()),
  };
}

/** Deploys the libraries a ClearingHouse links. */
export async function deployClearingHouseLibraries(signer: Signer): Promise<ClearingHouseLibraries> {
  return {
    CycleCommitLogic: await deployedAt(await new CycleCommitLogic__factory(signer).deploy()),
    DisputeLogic: await deployedAt(await new DisputeLogic__factory(signer).deploy()),
    PayoutLogic: await deployedAt(await new PayoutLogic__factory(signer).deploy()),
  };
}

/** The Vault factory's link map (library fully qualified name → address). */
export function vaultLinks(libraries: VaultLibraries) {
  return {
    "contracts/vault/RemunerationLogic.sol:RemunerationLogic": libraries.RemunerationLogic.address,
    "contracts/vault/ReserveLogic.sol:ReserveLogic": libraries.ReserveLogic.address,
  };
}

/** The ClearingHouse factory's link map. */
export function clearingHouseLinks(libraries: ClearingHouseLibraries) {
  return {
    "contracts/clearing/CycleCommitLogic.sol:CycleCommitLogic": libraries.CycleCommitLogic.address,
    "contracts/clearing/DisputeLogic.sol:DisputeLogic": libraries.DisputeLogic.address,
    "contracts/clearing/PayoutLogic.sol:PayoutLogic": libraries.PayoutLogic.address,
  };
}

/** A GuaranteeVerifier (stateless: one per deployment serves the Vault and the ClearingHouse). */
export async function deployGuaranteeVerifier(signer: Signer): Promise<string> {
  return (await deployedAt(await new GuaranteeVerifier__factory(signer).deploy())).address;
}

/** A Vault factory linked to freshly deployed Vault libraries (tests and tools that deploy a Vault alone). */
export async function vaultFactory(signer: Signer): Promise<Vault__factory> {
  return new Vault__factory(vaultLinks(await deployVaultLibraries(signer)), signer);
}

/** A ClearingHouse factory linked to freshly deployed ClearingHouse libraries. */
export async function clearingHouseFactory(signer: Signer): Promise<ClearingHouse__factory> {
  return new ClearingHouse__factory(clearingHouseLinks(await deployClearingHouseLibraries(signer)), signer);
}

/** A Vault on its own (tests, tools), with a new GuaranteeVerifier unless one is given. */
export async function deployVault(
  signer: Signer,
  args: { admin: string; adminTransferDelay: number | bigint; timings: Timings; verifier?: string },
): Promise<Vault> {
  const verifier = args.verifier ?? (await deployGuaranteeVerifier(signer));
  const factory = await vaultFactory(signer);
  const vault = await factory.deploy(args.admin, args.adminTransferDelay, args.timings, verifier);
  await vault.waitForDeployment();
  return vault;
}

/** Writes `deployments/<network>.json` under `rootDir` and returns its path. */
export function writeDeployment(network: string, record: DeploymentRecord, rootDir = process.cwd()): string {
  const dir = path.join(rootDir, "deployments");
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${network}.json`);
  writeFileSync(file, JSON.stringify({ network, ...record }, null, 2) + "\n");
  return file;
}

/** Accepts a compressed G2 key (bytes or hex) or an EIP-2537 struct. */
export function toEip2537(key: Uint8Array | string | Eip2537G2Point): Eip2537G2Point {
  if (typeof key === "string") return publicKeyToEip2537(getBytes(key));
  if (key instanceof Uint8Array) return publicKeyToEip2537(key);
  return key;
}

/**
 * Gives `admin` the Vault's config, key-manager and pauser roles while the Vault is still in setup (grants
 * are immediate until `finishSetup`); the deployer renounces them.
 */
async function handOverVaultRoles(vault: Vault, deployer: string, admin: string): Promise<void> {
  const roles = [await vault.CONFIG_ROLE(), await vault.KEY_MANAGER_ROLE(), await vault.PAUSER_ROLE()];
  for (const role of roles) await (await vault.grantRole(role, admin)).wait();
  for (const role of roles) await (await vault.renounceRole(role, deployer)).wait();
}

/**
 * Begins the transfer of the Vault's default admin role, which `admin` accepts after the delay
 * (`vault.acceptDefaultAdminTransfer()`); until then the deployer may still cancel it.
 */
async function beginVaultAdminTransfer(
  vault: Vault,
  admin: string,
): Promise<{ newAdmin: string; acceptableAfter: number }> {
  await (await vault.beginDefaultAdminTransfer(admin)).wait();
  const [newAdmin, schedule] = await vault.pendingDefaultAdmin();
  return { newAdmin, acceptableAfter: Number(schedule) };
}

async function deployedAt(contract: {
  waitForDeployment(): Promise<unknown>;
  getAddress(): Promise<string>;
  deploymentTransaction(): { wait(): Promise<{ blockNumber: number } | null> } | null;
}): Promise<DeployedContract> {
  await contract.waitForDeployment();
  const receipt = await contract.deploymentTransaction()?.wait();
  if (!receipt) throw new Error("deployment receipt missing");
  return { address: await contract.getAddress(), blockNumber: receipt.blockNumber };
}

function requireProvider(runner: ContractRunner): NonNullable<ContractRunner["provider"]> {
  if (!runner.provider) throw new Error("signer: must be connected to a provider");
  return runner.provider;
}

function operatorKeyFromEnv(network: string): Uint8Array | string | undefined {
  const publicKey = process.env.SURETY_OPERATOR_BLS_PUBLIC_KEY;
  if (publicKey) return publicKey;
  const ikm = process.env.SURETY_OPERATOR_BLS_IKM ?? (DEV_NETWORKS.has(network) ? DEVNET_BLS_IKM : undefined);
  return ikm ? blsKeyFromSecret(ikm, "SURETY_OPERATOR_BLS_IKM").publicKey : undefined;
}

function timingsFromEnv(): Partial<Timings> | undefined {
  const raw = process.env.SURETY_TIMINGS;
  if (!raw) return undefined;
  try {
    return JSON.parse(raw) as Partial<Timings>;
  } catch {
    throw new Error("SURETY_TIMINGS: must be a JSON object of seconds");
  }
}

/** SURETY_BOND_FLOOR_BPS, or the default for the network (production: full cover; dev networks: off). */
export function bondFloorFromEnv(network: string, raw = process.env.SURETY_BOND_FLOOR_BPS): number {
  if (raw === undefined || raw.trim() === "") return DEV_NETWORKS.has(network) ? 0 : DEFAULT_BOND_FLOOR_BPS;
  const value = raw.trim();
  if (!/^[0-9]{1,5}$/.test(value) || Number(value) > 10_000) {
    throw new Error(`SURETY_BOND_FLOOR_BPS: must be a whole number of basis points 0..10000, got "${raw}"`);
  }
  return Number(value);
}

function adminTransferDelayFromEnv(): number | undefined {
  const raw = process.env.SURETY_ADMIN_TRANSFER_DELAY;
  if (raw === undefined) return undefined;
  if (!/^[0-9]{1,10}$/.test(raw.trim())) {
    throw new Error(`SURETY_ADMIN_TRANSFER_DELAY: must be a whole number of seconds, got "${raw}"`);
  }
  return Number(raw.trim());
}

async function main(): Promise<void> {
  // Loaded here, not at the top: deploySurety itself needs only a signer (usable outside Hardhat's runtime).
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const hre = require("hardhat") as HardhatRuntimeEnvironment;
  const network = hre.network.name;
  const [signer] = await hre.ethers.getSigners();
  const dev = DEV_NETWORKS.has(network);
  const operatorBlsPublicKey = operatorKeyFromEnv(network);
  if (operatorBlsPublicKey === undefined) {
    console.warn("No operator BLS key (SURETY_OPERATOR_BLS_PUBLIC_KEY / _IKM): remunerate stays disabled.");
  }
  const deployment = await deploySurety(signer, {
    admin: process.env.SURETY_ADMIN_ADDRESS,
    adminTransferDelay: adminTransferDelayFromEnv(),
    operator: process.env.SURETY_OPERATOR_ADDRESS,
    guardian: process.env.SURETY_GUARDIAN_ADDRESS,
    operatorBlsPublicKey,
    timings: timingsFromEnv(),
    bondFloorBps: bondFloorFromEnv(network),
    tokens: process.env.SURETY_TOKENS?.split(",")
      .map((s) => s.trim())
      .filter(Boolean),
    testTokens: dev ? DEV_TEST_TOKENS : [],
  });
  const file = writeDeployment(network, deployment.record);
  console.log(`Deployed on ${network} (chain ${deployment.record.chainId}):`);
  for (const [name, c] of Object.entries(deployment.record.contracts)) {
    console.log(`  ${name.padEnd(18)} ${c.address} (block ${c.blockNumber})`);
  }
  for (const t of deployment.record.tokens)
    console.log(`  ${t.symbol.padEnd(18)} ${t.address} (${t.decimals} dec)`);
  const floor = deployment.record.config.bondFloorBps;
  console.log(
    floor === 0
      ? "  Bond floor: off (SURETY_BOND_FLOOR_BPS=0)"
      : `  Bond floor: ${floor} bps of each cycle's total debit per asset: post the operator bond ` +
          "(ClearingHouse.postBond) before the first commit, or Core holds its commits back",
  );
  const pending = deployment.record.config.pendingAdminTransfer;
  if (pending) {
    console.log(
      `  Vault default admin: still the deployer until ${pending.newAdmin} calls ` +
        `acceptDefaultAdminTransfer() after ${new Date(pending.acceptableAfter * 1000).toISOString()}`,
    );
  }
  console.log(`Wrote ${file}`);
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
