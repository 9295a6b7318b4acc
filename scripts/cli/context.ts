/**
 * What every CLI command works with: the deployment record of the chosen
 * network, a provider, the caller's wallet, the contracts, and helpers to
 * turn `--asset` / `--amount` into an address and base units.
 */
import { readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { JsonRpcProvider, Wallet, formatUnits, parseUnits } from "ethers";
import { parseAddress, sameAddress, ZERO_ADDRESS } from "../../sdk/wire";
import {
  ClearingHouse__factory,
  IERC20__factory,
  Vault__factory,
  type ClearingHouse,
  type IERC20,
  type Vault,
} from "../../typechain-types";
import { devAccount } from "../devnet/accounts";

/** Chain id of Hardhat networks: the only one where `--account <index>` (public dev keys) is allowed. */
export const DEV_CHAIN_ID = 31337;
export const PRIVATE_KEY_ENV = "SURETY_CLI_PRIVATE_KEY";
/** Where `login` keeps its session tokens unless `--session` says otherwise. */
export const SESSION_FILE_ENV = "SURETY_CLI_SESSION_FILE";

/**
 * The session file: SURETY_CLI_SESSION_FILE, else `surety/cli-session.json` under the user's config
 * directory (`$XDG_CONFIG_HOME`, else `~/.config`).
 */
export function defaultSessionFile(env: NodeJS.ProcessEnv = process.env, home = os.homedir()): string {
  const explicit = env[SESSION_FILE_ENV];
  if (explicit) return path.resolve(explicit);
  const configHome = env.XDG_CONFIG_HOME && path.isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : null;
  return path.join(configHome ?? path.join(home, ".config"), "surety", "cli-session.json");
}

export class CliError extends Error {
  override readonly name = "CliError";
}

export interface AssetInfo {
  address: string;
  symbol: string;
  decimals: number;
}

export interface DeploymentFile {
  network?: string;
  chainId: number;
  contracts: {
    Vault: { address: string };
    ClearingHouse: { address: string };
    ValidationRegistry: { address: string };
  };
  tokens?: { address: string; symbol: string; decimals: number }[];
  urls?: { rpc?: string; core?: string; facilitator?: string };
}

export interface CliOptions {
  network: string;
  deployment?: string;
  rpc?: string;
  core?: string;
  account?: string;
  /** A file holding the caller's private key (0x + 64 hex digits), instead of `account` or the variable. */
  keyFile?: string;
  /** The session file of `login` (default: {@link defaultSessionFile}). */
  session?: string;
}

export class CliContext {
  readonly provider: JsonRpcProvider;
  readonly vault: Vault;
  readonly clearingHouse: ClearingHouse;
  readonly coreUrl: string;
  readonly rpcUrl: string;
  private walletCache: Wallet | null = null;

  constructor(
    readonly deployment: DeploymentFile,
    readonly deploymentPath: string,
    private readonly options: CliOptions,
  ) {
    this.rpcUrl =
      options.rpc ?? process.env.SURETY_RPC_URL ?? deployment.urls?.rpc ?? "http://127.0.0.1:8545";
    this.coreUrl = (
      options.core ??
      process.env.SURETY_CORE_URL ??
      deployment.urls?.core ??
      "http://127.0.0.1:8080"
    ).replace(/\/+$/, "");
    // No response cache: back-to-back transactions (approve, then deposit) need fresh nonces.
    this.provider = new JsonRpcProvider(this.rpcUrl, deployment.chainId, {
      staticNetwork: true,
      cacheTimeout: -1,
    });
    this.provider.pollingInterval = 200;
    this.vault = Vault__factory.connect(deployment.contracts.Vault.address, this.provider);
    this.clearingHouse = ClearingHouse__factory.connect(
      deployment.contracts.ClearingHouse.address,
      this.provider,
    );
  }

  /** Reads `--deployment`, or deployments/<network>.json. */
  static load(options: CliOptions, cwd = process.cwd()): CliContext {
    const file = path.resolve(cwd, options.deployment ?? path.join("deployments", `${options.network}.json`));
    let json: DeploymentFile;
    try {
      json = JSON.parse(readFileSync(file, "utf8")) as DeploymentFile;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      throw new CliError(
        code === "ENOENT"
          ? `no deployment file ${file}: start the devnet (npm run devnet) or deploy (npm run deploy -- --network ${options.network}), or pass --deployment`
          : `deployment file ${file} is unreadable: ${(error as Error).message}`,
      );
    }
    if (
      !Number.isSafeInteger(json.chainId) ||
      !json.contracts?.Vault?.address ||
      !json.contracts?.ClearingHouse?.address
    ) {
      throw new CliError(
        `deployment file ${file}: chainId, contracts.Vault.address and contracts.ClearingHouse.address are required`,
      );
    }
    return new CliContext(json, file, options);
  }

  /** Whether a key was given (`--account`, `--key-file` or SURETY_CLI_PRIVATE_KEY): {@link wallet} can be built. */
  get hasKey(): boolean {
    return (
      this.options.account !== undefined ||
      this.options.keyFile !== undefined ||
      Boolean(process.env[PRIVATE_KEY_ENV])
    );
  }

  /** Where `login` keeps the session tokens (`--session`, else {@link defaultSessionFile}). */
  get sessionFile(): string {
    return this.options.session !== undefined ? path.resolve(this.options.session) : defaultSessionFile();
  }

  /**
   * The caller: `--account <index>` (dev chains only), the key in the file `--key-file`, or the key in
   * SURETY_CLI_PRIVATE_KEY.
   */
  get wallet(): Wallet {
    if (this.walletCache) return this.walletCache;
    const key = process.env[PRIVATE_KEY_ENV];
    let privateKey: string;
    if (this.options.account !== undefined && this.options.keyFile !== undefined) {
      throw new CliError("--account and --key-file: give one key, not both");
    }
    if (this.options.keyFile !== undefined) {
      privateKey = readKeyFile(this.options.keyFile);
    } else if (this.options.account !== undefined) {
      if (this.deployment.chainId !== DEV_CHAIN_ID) {
        throw new CliError(
          `--account uses Hardhat's public dev keys and only works on chain ${DEV_CHAIN_ID}; set ${PRIVATE_KEY_ENV} instead`,
        );
      }
      if (!/^[0-9]+$/.test(this.options.account))
        throw new CliError("--account: must be a dev account index (0-19)");
      try {
        privateKey = devAccount(Number(this.options.account)).privateKey;
      } catch (error) {
        throw new CliError(`--account: ${(error as Error).message}`);
      }
    } else if (key) {
      if (!/^0x[0-9a-fA-F]{64}$/.test(key.trim()))
        throw new CliError(`${PRIVATE_KEY_ENV}: must be 0x + 64 hex digits`);
      privateKey = key.trim();
    } else {
      throw new CliError(
        `no key: pass --account <dev account index> (devnet) or --key-file <file>, or set ${PRIVATE_KEY_ENV}`,
      );
    }
    this.walletCache = new Wallet(privateKey, this.provider);
    return this.walletCache;
  }

  /** ETH (zero address), and the deployment's tokens. */
  assets(): AssetInfo[] {
    return [
      { address: ZERO_ADDRESS, symbol: "ETH", decimals: 18 },
      ...(this.deployment.tokens ?? []).map((t) => ({
        address: t.address,
        symbol: t.symbol,
        decimals: t.decimals,
      })),
    ];
  }

  /** `--asset`: ETH, a token symbol of the deployment, or an address (default ETH). */
  asset(value: string | undefined): AssetInfo {
    const wanted = value ?? "ETH";
    const assets = this.assets();
    const bySymbol = assets.find((a) => a.symbol.toLowerCase() === wanted.toLowerCase());
    if (bySymbol) return bySymbol;
    let address: string;
    try {
      address = parseAddress(wanted, "--asset");
    } catch {
      throw new CliError(
        `--asset: ${JSON.stringify(wanted)} is neither ${assets.map((a) => a.symbol).join(", ")} nor an address`,
      );
    }
    const known = assets.find((a) => sameAddress(a.address, address));
    if (!known) throw new CliError(`--asset: ${address} is not ETH or a token of ${this.deploymentPath}`);
    return known;
  }

  token(asset: AssetInfo): IERC20 {
    return IERC20__factory.connect(asset.address, this.wallet);
  }

  /** The token for reads only: needs no key. */
  tokenView(asset: AssetInfo): IERC20 {
    return IERC20__factory.connect(asset.address, this.provider);
  }

  /** Local account for Core's routes and signatures (no provider needed). */
  get address(): string {
    return this.wallet.address;
  }
}

/** The private key in `file`: 0x + 64 hex digits, surrounding whitespace ignored; never echoed in errors. */
export function readKeyFile(file: string): string {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new CliError(`--key-file: cannot read ${file}: ${(error as Error).message}`);
  }
  const key = text.trim();
  if (!/^(0x)?[0-9a-fA-F]{64}$/.test(key)) {
    throw new CliError(`--key-file: ${file} must hold one private key, 0x + 64 hex digits`);
  }
  return key.startsWith("0x") ? key : `0x${key}`;
}

/** `--amount` in whole units (`1.5`), or base units with `--base-units`. */
export function parseAmount(
  value: string | undefined,
  asset: AssetInfo,
  baseUnits: boolean,
  flag = "--amount",
): bigint {
  if (value === undefined) throw new CliError(`${flag} is required`);
  let amount: bigint;
  try {
    amount = baseUnits ? BigInt(value) : parseUnits(value, asset.decimals);
  } catch {
    throw new CliError(
      `${flag}: ${JSON.stringify(value)} is not ${baseUnits ? "an integer" : `a decimal amount of ${asset.symbol} (${asset.decimals} decimals)`}`,
    );
  }
  if (amount <= 0n) throw new CliError(`${flag}: must be greater than zero`);
  return amount;
}

export function formatAmount(amount: bigint, asset: AssetInfo): string {
  return `${formatUnits(amount, asset.decimals)} ${asset.symbol} (${amount} base units)`;
}
