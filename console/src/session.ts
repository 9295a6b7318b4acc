/**
 * Sign-in with Ethereum (docs/operator-auth.md) through the browser's EIP-1193 wallet (`window.ethereum`):
 * `eth_requestAccounts`, `POST /auth/nonce`, the canonical EIP-4361 text built from Core's answer,
 * `personal_sign`, `POST /auth/verify`. The tokens stay in this page's memory only (a reload signs out);
 * an expired access token is renewed once with the refresh token (`POST /auth/refresh`), and sign-out
 * revokes the refresh token (`POST /auth/logout`). Whether the wallet is an admin is Core's answer to
 * `GET /console/api/session` (200 for every wallet, so a payer's sign-in logs no refused request).
 */
import { keccak_256 } from "@noble/hashes/sha3.js";
import { ApiError, requestJson } from "./api";

/** The part of EIP-1193 the page uses. */
export interface Eip1193Provider {
  request(args: { method: string; params?: unknown[] }): Promise<unknown>;
}

declare global {
  interface Window {
    ethereum?: Eip1193Provider;
  }
}

interface NonceBody {
  nonce: string;
  siwe: {
    domain: string;
    uri: string;
    chain_id: number;
    statement: string;
    issued_at: string;
    expiration: string;
  };
}

interface TokenBody {
  access_token: string;
  refresh_token: string;
  expires_in: number;
}

export interface Session {
  /** EIP-55. */
  address: string;
  admin: boolean;
}

let session: (Session & { access: string; refresh: string }) | null = null;

export function currentSession(): Session | null {
  return session && { address: session.address, admin: session.admin };
}

const utf8 = new TextEncoder();
const hex = (bytes: Uint8Array) => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");

/** EIP-55 mixed-case checksum of a 20-byte address (Core wants the SIWE address in this form). */
export function toChecksumAddress(address: string): string {
  const lower = address.toLowerCase().replace(/^0x/, "");
  if (!/^[0-9a-f]{40}$/.test(lower)) throw new Error(`the wallet answered a malformed address: ${address}`);
  const hash = hex(keccak_256(utf8.encode(lower)));
  let out = "0x";
  for (let i = 0; i < 40; i++) out += parseInt(hash[i], 16) >= 8 ? lower[i].toUpperCase() : lower[i];
  return out;
}

/** The EIP-4361 text, exactly as Core re-serialises it (docs/operator-auth.md, "The message text"). */
export function siweMessage(address: string, { nonce, siwe }: NonceBody): string {
  return [
    `${siwe.domain} wants you to sign in with your Ethereum account:`,
    address,
    "",
    siwe.statement,
    "",
    `URI: ${siwe.uri}`,
    "Version: 1",
    `Chain ID: ${siwe.chain_id}`,
    `Nonce: ${nonce}`,
    `Issued At: ${siwe.issued_at}`,
    `Expiration Time: ${siwe.expiration}`,
  ].join("\n");
}

const postJson = <T>(path: string, body: unknown) =>
  requestJson<T>(path, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });

/** Signs in with the browser's wallet; throws an Error whose message says what to do. */
export async function signIn(): Promise<Session> {
  const wallet = window.ethereum;
  if (!wallet) {
    throw new Error(
      "No Ethereum wallet in this browser (window.ethereum): install or unlock one (EIP-1193), then try again.",
    );
  }
  const accounts = (await wallet.request({ method: "eth_requestAccounts" })) as string[];
  if (!Array.isArray(accounts) || accounts.length === 0) throw new Error("The wallet shared no account.");
  const address = toChecksumAddress(accounts[0]);
  const nonce = await postJson<NonceBody>("/auth/nonce", { address });
  const message = siweMessage(address, nonce);
  const signature = (await wallet.request({
    method: "personal_sign",
    params: [`0x${hex(utf8.encode(message))}`, address],
  })) as string;
  const tokens = await postJson<TokenBody>("/auth/verify", { address, message, signature });
  session = { address, admin: false, access: tokens.access_token, refresh: tokens.refresh_token };
  const who = await authedJson<{ admin: boolean }>("/console/api/session");
  session.admin = who.admin;
  return currentSession()!;
}

export async function signOut(): Promise<void> {
  const ending = session;
  session = null;
  if (ending) await postJson("/auth/logout", { refresh_token: ending.refresh }).catch(() => undefined);
}

/**
 * GET (or POST, without a body) `path` with the session's bearer token. A `token_expired` answer renews the access token once with
 * the refresh token; when that fails the session ends (the page asks to sign in again).
 */
export async function authedJson<T>(path: string, method: "GET" | "POST" = "GET"): Promise<T> {
  if (!session) throw new ApiError("Sign in to read this.", 401, "missing_token");
  const read = (token: string) =>
    requestJson<T>(path, { method, headers: { authorization: `Bearer ${token}` } });
  try {
    return await read(session.access);
  } catch (error) {
    if (!(error instanceof ApiError && error.status === 401 && error.code === "token_expired")) throw error;
  }
  const held = session;
  try {
    const tokens = await postJson<TokenBody>("/auth/refresh", { refresh_token: held.refresh });
    if (session === held) {
      held.access = tokens.access_token;
      held.refresh = tokens.refresh_token;
    }
  } catch {
    if (session === held) session = null;
    throw new ApiError("Your session ended: sign in again.", 401, "token_expired");
  }
  return read(held.access);
}
