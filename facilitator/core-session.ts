/**
 * The facilitator's SIWE session with Core (docs/operator-auth.md): sign in
 * with the facilitator wallet (`POST /auth/nonce` → EIP-4361 message built
 * from Core's template with the `siwe` package → wallet signature →
 * `POST /auth/verify`), refresh the access token shortly before it expires
 * (`POST /auth/refresh`, which rotates the refresh token), and sign in again
 * when Core rejects the session.
 *
 * Logins and refreshes are single-flight: concurrent requests wait for the
 * same one. This matters beyond efficiency: Core rotates refresh tokens and
 * treats the reuse of a spent one as theft, revoking the session.
 */
import type { Wallet } from "ethers";
import { SiweMessage } from "siwe";
import type { Clock } from "./clock";
import { CoreProtocolError, type CoreFetch, type CoreResponse, coreHttpError } from "./core-http";

/** Refresh this long before expiry (or at half the lifetime, for very short tokens). */
export const REFRESH_MARGIN_SECONDS = 60;

interface Tokens {
  accessToken: string;
  refreshToken: string;
  /** Unix seconds after which the access token is refreshed before use. */
  refreshAt: number;
}

interface NonceTemplate {
  nonce: string;
  domain: string;
  uri: string;
  chainId: number;
  statement: string;
  expiration: string;
  issuedAt: string;
}

export class CoreSession {
  private tokens: Tokens | null = null;
  private pending: Promise<Tokens> | null = null;

  constructor(
    private readonly fetchCore: CoreFetch,
    private readonly wallet: Wallet,
    private readonly clock: Clock,
  ) {}

  /** A valid access token: the current one, a refreshed one, or one from a fresh sign-in. */
  async accessToken(): Promise<string> {
    const tokens = this.tokens;
    if (tokens !== null && this.clock.nowSeconds() < tokens.refreshAt) return tokens.accessToken;
    return (await this.renew()).accessToken;
  }

  /**
   * Core refused `accessToken` (401): forget the session so that the next
   * {@link accessToken} signs in again. A token that was already replaced is ignored.
   */
  invalidate(accessToken: string): void {
    if (this.tokens?.accessToken === accessToken) this.tokens = null;
  }

  private renew(): Promise<Tokens> {
    this.pending ??= (async () => {
      try {
        const current = this.tokens;
        this.tokens = current === null ? await this.signIn() : await this.refreshOrSignIn(current);
        return this.tokens;
      } finally {
        this.pending = null;
      }
    })();
    return this.pending;
  }

  private async refreshOrSignIn(current: Tokens): Promise<Tokens> {
    const response = await this.fetchCore({
      method: "POST",
      path: "/auth/refresh",
      json: { refresh_token: current.refreshToken },
    });
    // 401: the refresh token expired or was revoked; any other failure is Core's problem to report.
    if (response.status === 401) return this.signIn();
    return this.tokensFrom(response, "/auth/refresh");
  }

  private async signIn(): Promise<Tokens> {
    const address = this.wallet.address;
    const nonceResponse = await this.fetchCore({ method: "POST", path: "/auth/nonce", json: { address } });
    if (nonceResponse.status !== 200) throw coreHttpError(nonceResponse);
    const template = parseNonceTemplate(nonceResponse.body);
    const message = new SiweMessage({
      domain: template.domain,
      address,
      statement: template.statement,
      uri: template.uri,
      version: "1",
      chainId: template.chainId,
      nonce: template.nonce,
      issuedAt: template.issuedAt,
      expirationTime: template.expiration,
    }).prepareMessage();
    const signature = await this.wallet.signMessage(message);
    const verifyResponse = await this.fetchCore({
      method: "POST",
      path: "/auth/verify",
      json: { address, message, signature },
    });
    return this.tokensFrom(verifyResponse, "/auth/verify");
  }

  private tokensFrom(response: CoreResponse, path: string): Tokens {
    if (response.status !== 200) throw coreHttpError(response);
    const tokens = parseTokenAnswer(response.body);
    if (!tokens) {
      throw new CoreProtocolError(
        `Core's ${path} answer lacks access_token, refresh_token or expires_in`,
        200,
      );
    }
    const { accessToken, refreshToken, expiresIn } = tokens;
    const margin = Math.min(REFRESH_MARGIN_SECONDS, Math.floor(expiresIn / 2));
    return { accessToken, refreshToken, refreshAt: this.clock.nowSeconds() + expiresIn - margin };
  }
}

/**
 * The tokens of a 200 answer of `/auth/verify` or `/auth/refresh` (docs/operator-auth.md), or undefined
 * when a field is missing or malformed. One check for every client of Core's sign-in (this session, the CLI).
 */
export function parseTokenAnswer(
  body: unknown,
): { accessToken: string; refreshToken: string; expiresIn: number } | undefined {
  const b = body as Record<string, unknown> | null;
  const accessToken = b?.access_token;
  const refreshToken = b?.refresh_token;
  const expiresIn = b?.expires_in;
  if (
    typeof accessToken !== "string" ||
    accessToken === "" ||
    typeof refreshToken !== "string" ||
    refreshToken === "" ||
    typeof expiresIn !== "number" ||
    !Number.isSafeInteger(expiresIn) ||
    expiresIn <= 0
  ) {
    return undefined;
  }
  return { accessToken, refreshToken, expiresIn };
}

function parseNonceTemplate(body: unknown): NonceTemplate {
  const fail = (field: string): never => {
    throw new CoreProtocolError(`Core's /auth/nonce answer has no valid ${field}`, 200);
  };
  const object = (value: unknown): Record<string, unknown> | null =>
    typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  const text = (value: unknown, field: string): string =>
    typeof value === "string" && value !== "" ? value : fail(field);
  const wire = object(body) ?? fail("body");
  const siwe = object(wire.siwe) ?? fail("siwe");
  const chainId = siwe.chain_id;
  if (typeof chainId !== "number" || !Number.isSafeInteger(chainId) || chainId <= 0) fail("siwe.chain_id");
  return {
    nonce: text(wire.nonce, "nonce"),
    domain: text(siwe.domain, "siwe.domain"),
    uri: text(siwe.uri, "siwe.uri"),
    chainId: chainId as number,
    statement: text(siwe.statement, "siwe.statement"),
    expiration: text(siwe.expiration, "siwe.expiration"),
    issuedAt: text(siwe.issued_at, "siwe.issued_at"),
  };
}
