/**
 * The active deployment: `deployments/<network>.json` as written by
 * `scripts/deploy.ts` (`writeDeployment`, its `DeploymentRecord` plus a
 * `network` key). Core reads it once at startup and refuses to start when it
 * is missing or malformed, naming the file and the field at fault.
 *
 * Only the fields Core uses are validated; the rest (timings, roles, block
 * numbers of other contracts) stay in the file for other tools. The type is
 * defined here, not imported from scripts/, so the operator does not depend
 * on deploy tooling (typechain).
 */
import { readFileSync } from "node:fs";
import { WireError } from "../sdk/errors";
import {
  describeType,
  parseAddress,
  parseObject,
  parseSafeInteger,
  parseString,
  sameAddress,
  ZERO_ADDRESS,
} from "../sdk/wire";

/** ERC-20 decimals are a uint8. */
export const MAX_TOKEN_DECIMALS = 255;
const MAX_SYMBOL_BYTES = 32;

/** An ERC-20 collateral asset enabled on the Vault (`GET /core/tokens`). */
export interface DeploymentToken {
  symbol: string;
  /** EIP-55 checksummed. */
  address: string;
  decimals: number;
}

export interface DeploymentInfo {
  /** Network name the file was written for (informational). */
  network: string | null;
  chainId: number;
  /** Vault: the EIP-712 `verifyingContract` and the certificate domain's contract. */
  vault: string;
  /** Block the Vault was deployed in (where a chain indexer starts). */
  vaultDeployBlock: number;
  clearingHouse: string;
  validationRegistry: string;
  /** Registries the deploy script marked trusted on the Vault. */
  trustedRegistries: readonly string[];
  tokens: readonly DeploymentToken[];
}

/** The deployment file is unusable; the message names the file and the field. */
export class DeploymentError extends Error {
  override readonly name = "DeploymentError";
}

function contract(
  contracts: Record<string, unknown>,
  name: string,
): { address: string; blockNumber: number } {
  const entry = parseObject(contracts[name], `contracts.${name}`);
  return {
    address: parseAddress(entry.address, `contracts.${name}.address`),
    blockNumber:
      entry.blockNumber === undefined
        ? 0
        : parseSafeInteger(entry.blockNumber, `contracts.${name}.blockNumber`),
  };
}

function parseToken(value: unknown, field: string): DeploymentToken {
  const token = parseObject(value, field);
  const address = parseAddress(token.address, `${field}.address`);
  if (address === ZERO_ADDRESS) {
    throw new WireError(`${field}.address`, "must not be the zero address (ETH is always supported)");
  }
  const symbol = parseString(token.symbol, `${field}.symbol`, MAX_SYMBOL_BYTES);
  if (symbol.trim() === "") throw new WireError(`${field}.symbol`, "must not be empty");
  return {
    symbol,
    address,
    decimals: parseSafeInteger(token.decimals, `${field}.decimals`, MAX_TOKEN_DECIMALS),
  };
}

/** Validates the parsed JSON of a deployment file; throws a WireError naming the field. */
export function parseDeployment(value: unknown): DeploymentInfo {
  const root = parseObject(value, "deployment");
  const contracts = parseObject(root.contracts, "contracts");
  const vault = contract(contracts, "Vault");
  const config = root.config === undefined ? {} : parseObject(root.config, "config");
  const trusted = config.trustedRegistries ?? [];
  if (!Array.isArray(trusted)) {
    throw new WireError("config.trustedRegistries", `must be an array, got ${describeType(trusted)}`);
  }
  const tokensValue = root.tokens ?? [];
  if (!Array.isArray(tokensValue))
    throw new WireError("tokens", `must be an array, got ${describeType(tokensValue)}`);
  const tokens = tokensValue.map((token, i) => parseToken(token, `tokens[${i}]`));
  tokens.forEach((token, i) => {
    if (tokens.findIndex((other) => sameAddress(other.address, token.address)) !== i) {
      throw new WireError(`tokens[${i}].address`, `${token.address} is listed twice`);
    }
  });
  return Object.freeze({
    network: root.network === undefined ? null : parseString(root.network, "network", 64),
    chainId: parseSafeInteger(root.chainId, "chainId"),
    vault: vault.address,
    vaultDeployBlock: vault.blockNumber,
    clearingHouse: contract(contracts, "ClearingHouse").address,
    validationRegistry: contract(contracts, "ValidationRegistry").address,
    trustedRegistries: Object.freeze(
      trusted.map((address, i) => parseAddress(address, `config.trustedRegistries[${i}]`)),
    ),
    tokens: Object.freeze(tokens.map((token) => Object.freeze(token))),
  });
}

/** Reads and validates `file`; every failure is a {@link DeploymentError} naming the file. */
export function loadDeployment(file: string): DeploymentInfo {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new DeploymentError(
      `deployment file ${file} cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); ` +
        "deploy the contracts first (scripts/deploy.ts) or set SURETY_DEPLOYMENT_FILE",
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new DeploymentError(`deployment file ${file} is not valid JSON: ${(error as Error).message}`);
  }
  try {
    return parseDeployment(json);
  } catch (error) {
    if (error instanceof WireError) throw new DeploymentError(`deployment file ${file}: ${error.message}`);
    throw error;
  }
}

/** True for ETH (the zero address) and for every token of the deployment. */
export function isSupportedAsset(deployment: DeploymentInfo, asset: string): boolean {
  return (
    sameAddress(asset, ZERO_ADDRESS) || deployment.tokens.some((token) => sameAddress(token.address, asset))
  );
}
