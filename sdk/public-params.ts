/**
 * Core's public parameters (`GET /core/public-params`, interface spec
 * "Public parameters") and supported tokens (`GET /core/tokens`, "Supported
 * token"): the one definition of both bodies. Core builds them with
 * {@link buildWirePublicParams} / {@link buildWireTokenList}; clients
 * (facilitator, buyers) read them with the strict parsers, whose WireErrors
 * name the field (`public_params.chain_id`).
 */
import type { ProtocolTimings, PublicParams as PublicParamsBody, Tokens } from "./api-public";
import { publicKeyFromArray, publicKeyToArray } from "./bls";
import { WireError } from "./errors";
import { certificateDomain, VALIDATION_HASH_CANONICALIZATION_VERSION } from "./ids";
import {
  describeType,
  type GuaranteeVersion,
  parseAddress,
  parseBytes32,
  parseObject,
  parseSafeInteger,
  parseString,
  parseVersion,
} from "./wire";

/** `protocol_timings` of the public params: the Vault's `timings()`, in seconds. */
export type WireProtocolTimings = ProtocolTimings;

/** The Vault's timings (seconds), as the contracts name them. */
export interface ProtocolTimingValues {
  cycleLength: number;
  commitDelay: number;
  challengeWindow: number;
  paymentWindow: number;
  defaultWindow: number;
  withdrawalGracePeriod: number;
  confirmationLag: number;
}

/**
 * `GET /core/public-params`, every field as served (all present): the type of its schema
 * (`sdk/api-public.ts`). The first eleven are the interface specification's; `clearing_house_address`,
 * `protocol_timings` and `latest_validation_deadline` are additions (docs/operator-api.md), which
 * {@link parsePublicParams} reads as null when absent.
 */
export type WirePublicParams = PublicParamsBody;

/** The public params, parsed and cross-checked. */
export interface PublicParams {
  /** Core's BLS public key, 96 compressed bytes (a valid G2 point). */
  blsPublicKey: Uint8Array;
  /** Vault address, checksummed. */
  vault: string;
  rpcUrl: string;
  eip712Name: string;
  eip712Version: string;
  chainId: number;
  /** Distinct, ascending, not empty. */
  acceptedVersions: readonly GuaranteeVersion[];
  /** The largest of `acceptedVersions`. */
  maxAcceptedVersion: GuaranteeVersion;
  /** Checksummed, distinct. */
  trustedRegistries: readonly string[];
  /** Certificate domain, lower-case hex. */
  certificateDomain: string;
  /** Always {@link VALIDATION_HASH_CANONICALIZATION_VERSION} (the only one implemented). */
  canonicalizationVersion: string;
  /** ClearingHouse address, checksummed; null when the Core does not publish it. */
  clearingHouse: string | null;
  /** Null when the Core has not read them or does not publish them. */
  timings: ProtocolTimingValues | null;
  /** Latest V2 `validation_deadline` accepted when the params were served; null: no cap published. */
  latestValidationDeadline: number | null;
}

/** What Core chooses; the rest of the params is derived from it. */
export type PublicParamsInput = Omit<
  PublicParams,
  "maxAcceptedVersion" | "certificateDomain" | "canonicalizationVersion" | "clearingHouse"
> & { clearingHouse: string };

/** Longest accepted text field (names, versions, URLs). */
export const MAX_PUBLIC_PARAMS_TEXT_BYTES = 1024;

function parseArray(value: unknown, field: string): unknown[] {
  if (!Array.isArray(value)) throw new WireError(field, `must be an array, got ${describeType(value)}`);
  return value;
}

/**
 * The public params Core serves for `input`: the domain separator, the max
 * version and the canonicalization version are derived, so Core cannot
 * publish inconsistent params. Throws a RangeError for no accepted version.
 */
export function buildWirePublicParams(input: PublicParamsInput): WirePublicParams {
  if (input.acceptedVersions.length === 0) throw new RangeError("acceptedVersions must not be empty");
  return {
    public_key: publicKeyToArray(input.blsPublicKey),
    contract_address: input.vault,
    ethereum_http_rpc_url: input.rpcUrl,
    eip712_name: input.eip712Name,
    eip712_version: input.eip712Version,
    chain_id: input.chainId,
    max_accepted_guarantee_version: input.acceptedVersions.includes(2) ? 2 : 1,
    accepted_guarantee_versions: [...input.acceptedVersions],
    active_guarantee_domain_separator: certificateDomain({ chainId: input.chainId, vault: input.vault }),
    trusted_validation_registries: [...input.trustedRegistries],
    validation_hash_canonicalization_version: VALIDATION_HASH_CANONICALIZATION_VERSION,
    clearing_house_address: input.clearingHouse,
    protocol_timings: input.timings === null ? null : toWireProtocolTimings(input.timings),
    latest_validation_deadline: input.latestValidationDeadline,
  };
}

export function toWireProtocolTimings(timings: ProtocolTimingValues): WireProtocolTimings {
  return {
    cycle_length_seconds: timings.cycleLength,
    commit_delay_seconds: timings.commitDelay,
    challenge_window_seconds: timings.challengeWindow,
    payment_window_seconds: timings.paymentWindow,
    default_window_seconds: timings.defaultWindow,
    withdrawal_grace_period_seconds: timings.withdrawalGracePeriod,
    confirmation_lag_seconds: timings.confirmationLag,
  };
}

/** Parses `protocol_timings` (null or absent → null); each a non-negative whole number of seconds. */
export function parseProtocolTimings(value: unknown, field: string): ProtocolTimingValues | null {
  if (value === undefined || value === null) return null;
  const wire = parseObject(value, field);
  const seconds = (name: keyof WireProtocolTimings) => parseSafeInteger(wire[name], `${field}.${name}`);
  const timings = {
    cycleLength: seconds("cycle_length_seconds"),
    commitDelay: seconds("commit_delay_seconds"),
    challengeWindow: seconds("challenge_window_seconds"),
    paymentWindow: seconds("payment_window_seconds"),
    defaultWindow: seconds("default_window_seconds"),
    withdrawalGracePeriod: seconds("withdrawal_grace_period_seconds"),
    // Added with the confirmation lag: a Core from before it serves none (0 = the old invariant).
    confirmationLag: wire.confirmation_lag_seconds === undefined ? 0 : seconds("confirmation_lag_seconds"),
  };
  if (timings.cycleLength === 0)
    throw new WireError(`${field}.cycle_length_seconds`, "must be greater than zero");
  return timings;
}

/**
 * Parses Core's public params strictly. Inconsistent params are refused: a
 * domain separator that is not the certificate domain of `chain_id` and
 * `contract_address`, a max version that is not the largest accepted one, or
 * a validation-hash canonicalization other than the one implemented here (a
 * client would otherwise approve payments Core must reject). `field`
 * prefixes error paths.
 */
export function parsePublicParams(value: unknown, field = "public_params"): PublicParams {
  const wire = parseObject(value, field);
  const chainId = parseSafeInteger(wire.chain_id, `${field}.chain_id`);
  if (chainId === 0) throw new WireError(`${field}.chain_id`, "must be greater than zero");
  const vault = parseAddress(wire.contract_address, `${field}.contract_address`);
  const eip712Name = parseString(wire.eip712_name, `${field}.eip712_name`, MAX_PUBLIC_PARAMS_TEXT_BYTES);
  const eip712Version = parseString(
    wire.eip712_version,
    `${field}.eip712_version`,
    MAX_PUBLIC_PARAMS_TEXT_BYTES,
  );
  if (eip712Name === "") throw new WireError(`${field}.eip712_name`, "must not be empty");
  if (eip712Version === "") throw new WireError(`${field}.eip712_version`, "must not be empty");
  const rpcUrl = parseString(
    wire.ethereum_http_rpc_url,
    `${field}.ethereum_http_rpc_url`,
    MAX_PUBLIC_PARAMS_TEXT_BYTES,
  );

  const acceptedVersions = [
    ...new Set(
      parseArray(wire.accepted_guarantee_versions, `${field}.accepted_guarantee_versions`).map((v, i) =>
        parseVersion(v, `${field}.accepted_guarantee_versions[${i}]`),
      ),
    ),
  ].sort((a, b) => a - b);
  if (acceptedVersions.length === 0) {
    throw new WireError(`${field}.accepted_guarantee_versions`, "must not be empty");
  }
  const maxAcceptedVersion = parseVersion(
    wire.max_accepted_guarantee_version,
    `${field}.max_accepted_guarantee_version`,
  );
  if (maxAcceptedVersion !== acceptedVersions[acceptedVersions.length - 1]) {
    throw new WireError(
      `${field}.max_accepted_guarantee_version`,
      "must equal the largest of accepted_guarantee_versions",
    );
  }

  const trustedRegistries = parseArray(
    wire.trusted_validation_registries,
    `${field}.trusted_validation_registries`,
  ).map((address, i) => parseAddress(address, `${field}.trusted_validation_registries[${i}]`));

  const domain = parseBytes32(
    wire.active_guarantee_domain_separator,
    `${field}.active_guarantee_domain_separator`,
  );
  if (domain !== certificateDomain({ chainId, vault })) {
    throw new WireError(
      `${field}.active_guarantee_domain_separator`,
      "is not the certificate domain of chain_id and contract_address",
    );
  }
  const canonicalizationVersion = parseString(
    wire.validation_hash_canonicalization_version,
    `${field}.validation_hash_canonicalization_version`,
    MAX_PUBLIC_PARAMS_TEXT_BYTES,
  );
  if (canonicalizationVersion !== VALIDATION_HASH_CANONICALIZATION_VERSION) {
    throw new WireError(
      `${field}.validation_hash_canonicalization_version`,
      `must be "${VALIDATION_HASH_CANONICALIZATION_VERSION}" (the one implemented here)`,
    );
  }

  const clearingHouse =
    wire.clearing_house_address === undefined
      ? null
      : parseAddress(wire.clearing_house_address, `${field}.clearing_house_address`);
  const latestValidationDeadline =
    wire.latest_validation_deadline === undefined || wire.latest_validation_deadline === null
      ? null
      : parseSafeInteger(wire.latest_validation_deadline, `${field}.latest_validation_deadline`);

  return {
    blsPublicKey: publicKeyFromArray(wire.public_key, `${field}.public_key`),
    vault,
    rpcUrl,
    eip712Name,
    eip712Version,
    chainId,
    acceptedVersions: Object.freeze(acceptedVersions),
    maxAcceptedVersion,
    trustedRegistries: Object.freeze([...new Set(trustedRegistries)]),
    certificateDomain: domain,
    canonicalizationVersion,
    clearingHouse,
    timings: parseProtocolTimings(wire.protocol_timings, `${field}.protocol_timings`),
    latestValidationDeadline,
  };
}

// ---------------------------------------------------------------------------------------------
// GET /core/tokens
// ---------------------------------------------------------------------------------------------

/** `GET /core/tokens` (its schema: `sdk/api-public.ts`). */
export type WireTokenList = Tokens;
/** One ERC-20 collateral asset Core accepts. */
export type WireToken = Tokens["tokens"][number];

/** Longest accepted token symbol. */
export const MAX_TOKEN_SYMBOL_BYTES = 64;
/** ERC-20 `decimals()` is a uint8. */
export const MAX_TOKEN_DECIMALS = 255;

/** The body Core serves for its tokens (copies, so the caller's objects are not shared). */
export function buildWireTokenList(chainId: number, tokens: readonly WireToken[]): WireTokenList {
  return {
    chain_id: chainId,
    tokens: tokens.map(({ symbol, address, decimals }) => ({ symbol, address, decimals })),
  };
}

/** Parses `GET /core/tokens` strictly; addresses come back checksummed. */
export function parseTokenList(value: unknown, field = "tokens_response"): WireTokenList {
  const wire = parseObject(value, field);
  const chainId = parseSafeInteger(wire.chain_id, `${field}.chain_id`);
  if (chainId === 0) throw new WireError(`${field}.chain_id`, "must be greater than zero");
  const tokens = parseArray(wire.tokens, `${field}.tokens`).map((item, i) => {
    const path = `${field}.tokens[${i}]`;
    const token = parseObject(item, path);
    return {
      symbol: parseString(token.symbol, `${path}.symbol`, MAX_TOKEN_SYMBOL_BYTES),
      address: parseAddress(token.address, `${path}.address`),
      decimals: parseSafeInteger(token.decimals, `${path}.decimals`, MAX_TOKEN_DECIMALS),
    };
  });
  return { chain_id: chainId, tokens };
}
