/**
 * Sign-In with Ethereum (EIP-4361) checks, on top of the `siwe` package:
 * the message must be canonical, carry this deployment's domain, URI, chain
 * id and statement, be within its validity window by the injected clock, and
 * be signed by the address the caller claims. Nonce bookkeeping is the
 * caller's (it needs the store); this module only reads the nonce out.
 */
import { SiweErrorType, SiweMessage } from "siwe";
import { getAddress, isHexString, verifyMessage } from "ethers";
import { sameAddress } from "../../sdk/wire";
import { type Clock, isoFromSeconds } from "../clock";
import type { OperatorConfig } from "../config";
import { type AuthErrorCode, AuthError } from "./errors";

/** Tolerated clock difference between the wallet's `Issued At` and ours. */
export const SIWE_CLOCK_SKEW_SECONDS = 30;

export type SiweConfig = Pick<
  OperatorConfig,
  "siweDomain" | "siweUri" | "siweStatement" | "chainId" | "nonceLifetimeSeconds"
>;

/** The `siwe` object of the nonce response: what the wallet must put in its message. */
export interface SiweTemplate {
  domain: string;
  uri: string;
  chain_id: number;
  statement: string;
  expiration: string;
  issued_at: string;
}

export function siweTemplate(config: SiweConfig, issuedAt: number): SiweTemplate {
  return {
    domain: config.siweDomain,
    uri: config.siweUri,
    chain_id: config.chainId,
    statement: config.siweStatement,
    expiration: isoFromSeconds(issuedAt + config.nonceLifetimeSeconds),
    issued_at: isoFromSeconds(issuedAt),
  };
}

export interface SiweSignIn {
  address: string;
  message: string;
  signature: string;
}

function reject(code: AuthErrorCode, message: string): AuthError {
  return new AuthError(code, message);
}

function parseTime(value: string | undefined, field: string): number | undefined {
  if (value === undefined) return undefined;
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw reject("invalid_siwe_message", `message ${field} is not a valid timestamp`);
  return ms / 1000;
}

/** Longest excerpt of the offending line quoted in a parse refusal. */
const MAX_QUOTED_LINE = 80;

/** `text` as a JSON string (control characters such as `\r` visible), cut to {@link MAX_QUOTED_LINE}. */
function quoted(text: string): string {
  return JSON.stringify(text.length > MAX_QUOTED_LINE ? `${text.slice(0, MAX_QUOTED_LINE)}…` : text);
}

/**
 * What is wrong with a message the siwe package's ABNF parser refused, on one line. The parser throws its
 * findings (`line 2: invalid EIP-55 address - 0x…`, each ending in a newline) followed by its internal state
 * (`Invalid message: {"success":false,"state":103,…}`); the findings are kept (an address not in EIP-55 form
 * is named with its checksummed form), and when there are none the line where parsing stopped is quoted.
 */
export function siweParseProblem(message: string, error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  const findings: string[] = [];
  let stoppedAt: number | null = null;
  let matched: number | null = null;
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "" || /^invalid message: max line number was \d+$/.test(line)) continue;
    const state = /^Invalid message: (\{.*\})$/.exec(line);
    if (state !== null) {
      try {
        const result = JSON.parse(state[1]) as { maxMatched?: unknown; matched?: unknown };
        if (typeof result.maxMatched === "number") stoppedAt = result.maxMatched;
        if (typeof result.matched === "number") matched = result.matched;
      } catch {
        // not the parser's state after all: nothing to add
      }
      continue;
    }
    const eip55 = /^line (\d+): invalid EIP-55 address - (\S+)$/.exec(line);
    if (eip55 !== null) {
      const [, lineNumber, address] = eip55;
      const checksummed = isHexString(address, 20) ? ` (EIP-55: ${getAddress(address.toLowerCase())})` : "";
      findings.push(`line ${lineNumber}: address ${address} is not in EIP-55 checksummed form${checksummed}`);
      continue;
    }
    findings.push(line);
  }
  if (findings.length > 0) return findings.join("; ");
  if (stoppedAt === null) return "it does not follow the EIP-4361 format";
  const lines = message.split("\n");
  const lineIndex = message.slice(0, stoppedAt).split("\n").length - 1;
  const lineNumber = Math.min(lineIndex, lines.length - 1) + 1;
  if (matched !== null && matched > 0 && matched < message.length) {
    return `unexpected text after the last field, at line ${lineNumber} (no trailing newline is allowed)`;
  }
  return `line ${lineNumber} does not fit the format: ${quoted(lines[lineNumber - 1])}`;
}

/** Checks everything but the nonce's state; returns the parsed message. Throws AuthErrors (401 at the HTTP edge). */
export async function verifySiweSignIn(
  config: SiweConfig,
  clock: Clock,
  input: SiweSignIn,
): Promise<SiweMessage> {
  let parsed: SiweMessage;
  try {
    parsed = new SiweMessage(input.message);
  } catch (error) {
    throw reject(
      "invalid_siwe_message",
      `message is not a valid EIP-4361 message: ${siweParseProblem(input.message, error)}`,
    );
  }
  // The signature is checked over the re-serialised message; insisting on the
  // canonical form means the fields we checked are exactly the bytes signed.
  if (parsed.prepareMessage() !== input.message) {
    throw reject("invalid_siwe_message", "message is not in canonical EIP-4361 form");
  }

  if (!sameAddress(parsed.address, input.address)) {
    throw reject("siwe_address_mismatch", "message address does not match the address field");
  }
  const uriScheme = new URL(config.siweUri).protocol.replace(/:$/, "");
  if (parsed.domain !== config.siweDomain || (parsed.scheme !== undefined && parsed.scheme !== uriScheme)) {
    throw reject("siwe_domain_mismatch", `message domain must be ${config.siweDomain}`);
  }
  if (parsed.uri !== config.siweUri)
    throw reject("siwe_uri_mismatch", `message URI must be ${config.siweUri}`);
  if (parsed.chainId !== config.chainId) {
    throw reject("siwe_chain_id_mismatch", `message chain ID must be ${config.chainId}`);
  }
  if (parsed.statement !== config.siweStatement) {
    throw reject("siwe_statement_mismatch", "message statement does not match the one issued with the nonce");
  }

  const now = clock.nowSeconds();
  const issuedAt = parseTime(parsed.issuedAt, "Issued At");
  const expiresAt = parseTime(parsed.expirationTime, "Expiration Time");
  const notBefore = parseTime(parsed.notBefore, "Not Before");
  if (issuedAt === undefined) throw reject("invalid_siwe_message", "message has no Issued At");
  if (issuedAt > now + SIWE_CLOCK_SKEW_SECONDS)
    throw reject("siwe_not_yet_valid", "message is issued in the future");
  // Nonces live nonceLifetimeSeconds; a message older than that cannot carry a live one.
  if (issuedAt < now - config.nonceLifetimeSeconds - SIWE_CLOCK_SKEW_SECONDS) {
    throw reject("siwe_message_expired", "message was issued too long ago");
  }
  if (expiresAt !== undefined && expiresAt <= now)
    throw reject("siwe_message_expired", "message has expired");
  if (notBefore !== undefined && notBefore > now)
    throw reject("siwe_not_yet_valid", "message is not valid yet");

  // Recover first ourselves: clean 401s for malformed signatures (the siwe
  // package would log those to the console), and no EIP-1271 provider calls.
  let signer: string;
  try {
    signer = verifyMessage(input.message, input.signature);
  } catch {
    throw reject("invalid_signature", "signature is not a valid secp256k1 signature");
  }
  if (!sameAddress(signer, parsed.address)) {
    throw reject("invalid_signature", "signature was not made by the message's address");
  }
  const result = await parsed.verify(
    { signature: input.signature, domain: config.siweDomain, time: isoFromSeconds(now) },
    { suppressExceptions: true },
  );
  if (!result.success) {
    const type = result.error?.type;
    if (type === SiweErrorType.EXPIRED_MESSAGE) throw reject("siwe_message_expired", "message has expired");
    if (type === SiweErrorType.NOT_YET_VALID_MESSAGE)
      throw reject("siwe_not_yet_valid", "message is not valid yet");
    throw reject("invalid_signature", `SIWE verification failed: ${type ?? "unknown reason"}`);
  }
  return parsed;
}
