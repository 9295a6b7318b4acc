/**
 * The CLI's view of Core over HTTP: public endpoints (public params, cycles, proofs) without auth, and the
 * endpoints that need a bearer token. Signing in is the facilitator's SIWE client (`CoreSession`: one
 * definition of the EIP-4361 flow); `login` keeps its tokens in the session file (./session.ts), which
 * {@link SignedInReader} reads, refreshes and, with a key at hand, renews.
 */
import type { Wallet } from "ethers";
import { systemClock } from "../../facilitator/clock";
import {
  coreErrorOf,
  coreFetch,
  coreHttpError,
  type CoreFetch,
  type CoreResponse,
} from "../../facilitator/core-http";
import { CoreSession, REFRESH_MARGIN_SECONDS, parseTokenAnswer } from "../../facilitator/core-session";
import { sameAddress } from "../../sdk/wire";
import { type CliContext, CliError } from "./context";
import { SessionStore, type StoredSession } from "./session";

const CORE_TIMEOUT_MS = 10_000;

export class CoreHttp {
  private readonly fetchCore: CoreFetch;
  private session: CoreSession | null = null;

  constructor(readonly baseUrl: string) {
    this.fetchCore = coreFetch(baseUrl, CORE_TIMEOUT_MS);
  }

  /** GET without auth; throws a CliError naming Core's answer unless it is 200. */
  async get(path: string): Promise<unknown> {
    const response = await this.call(() => this.fetchCore({ method: "GET", path }));
    if (response.status !== 200) throw new CliError(`${path}: ${coreHttpError(response).message}`);
    return response.body;
  }

  /** GET with the wallet's bearer token; returns status and body (the caller decides what a 404 means). */
  async getAuthenticated(wallet: Wallet, path: string): Promise<{ status: number; body: unknown }> {
    this.session ??= new CoreSession(this.fetchCore, wallet, systemClock);
    const session = this.session;
    const bearer = await this.call(() => session.accessToken());
    return this.call(() => this.fetchCore({ method: "GET", path, bearer }));
  }

  /** GET with `bearer`; status and body. */
  async getWithToken(path: string, bearer: string): Promise<CoreResponse> {
    return this.call(() => this.fetchCore({ method: "GET", path, bearer }));
  }

  /**
   * A fresh SIWE sign-in of `wallet` through the facilitator's CoreSession; the tokens of its
   * `/auth/verify` answer as a session to store.
   */
  async signIn(wallet: Wallet): Promise<StoredSession> {
    let verified: CoreResponse | null = null;
    const capture: CoreFetch = async (request) => {
      const response = await this.fetchCore(request);
      if (request.path === "/auth/verify" && response.status === 200) verified = response;
      return response;
    };
    const session = new CoreSession(capture, wallet, systemClock);
    await this.call(() => session.accessToken());
    if (verified === null) throw new CliError(`Core at ${this.baseUrl}: the sign-in gave no tokens`);
    return sessionFrom(wallet.address, verified, new Date().toISOString(), "/auth/verify");
  }

  /**
   * `POST /auth/refresh` (which rotates the refresh token): the renewed session, or null when Core refuses
   * the refresh token (401: expired, revoked or reused; the `code` is in `refused`).
   */
  async refresh(stored: StoredSession): Promise<{ session: StoredSession } | { refused: string }> {
    const response = await this.call(() =>
      this.fetchCore({
        method: "POST",
        path: "/auth/refresh",
        json: { refresh_token: stored.refresh_token },
      }),
    );
    if (response.status === 401) return { refused: coreErrorOf(response.body).code ?? "401" };
    if (response.status !== 200) throw new CliError(`/auth/refresh: ${coreHttpError(response).message}`);
    return { session: sessionFrom(stored.address, response, stored.signed_in_at, "/auth/refresh") };
  }

  /** `POST /auth/logout`: revokes the refresh token's session on Core (idempotent: 204 for any token). */
  async logout(refreshToken: string): Promise<void> {
    const response = await this.call(() =>
      this.fetchCore({ method: "POST", path: "/auth/logout", json: { refresh_token: refreshToken } }),
    );
    if (response.status !== 204) throw new CliError(`/auth/logout: ${coreHttpError(response).message}`);
  }

  private async call<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      if (error instanceof CliError) throw error;
      throw new CliError(`Core at ${this.baseUrl}: ${(error as Error).message}`);
    }
  }
}

/** The tokens of a 200 answer of `/auth/verify` or `/auth/refresh`, as a session of `address`. */
function sessionFrom(
  address: string,
  response: CoreResponse,
  signedInAt: string,
  path: string,
): StoredSession {
  const tokens = parseTokenAnswer(response.body);
  if (!tokens) throw new CliError(`Core's ${path} answer lacks access_token, refresh_token or expires_in`);
  const { accessToken, refreshToken, expiresIn } = tokens;
  return {
    address,
    access_token: accessToken,
    refresh_token: refreshToken,
    access_token_expires_at: systemClock.nowSeconds() + expiresIn,
    signed_in_at: signedInAt,
  };
}

/**
 * Reads Core's private endpoints as one wallet: the session `login` stored for this Core (refreshed when
 * its access token runs out, the rotated tokens stored at once), or, with a key given (`--account`,
 * `--key-file`, SURETY_CLI_PRIVATE_KEY) and no stored session of that wallet, a sign-in for this run only.
 * When Core refuses the stored session and a key of the same wallet is at hand, it signs in again and
 * stores the new session.
 */
export class SignedInReader {
  private constructor(
    private readonly core: CoreHttp,
    private readonly wallet: Wallet | null,
    /** Where the session lives between runs; null: this run only. */
    private readonly store: SessionStore | null,
    private current: StoredSession | null,
    readonly address: string,
  ) {}

  static open(ctx: CliContext, core = new CoreHttp(ctx.coreUrl)): SignedInReader {
    const store = new SessionStore(ctx.sessionFile);
    const stored = store.read(ctx.coreUrl);
    const wallet = ctx.hasKey ? ctx.wallet : null;
    if (wallet !== null && (stored === null || !sameAddress(stored.address, wallet.address))) {
      return new SignedInReader(core, wallet, null, null, wallet.address);
    }
    if (stored === null) {
      throw new CliError(
        `not signed in to ${ctx.coreUrl}: run \`npm run cli -- login --account <i>\` (or --key-file <file>) ` +
          `first, or pass a key (session file ${ctx.sessionFile})`,
      );
    }
    return new SignedInReader(core, wallet, store, stored, stored.address);
  }

  /** GET `path` with the session's bearer token; one renewal and retry when Core answers 401. */
  async get(path: string): Promise<CoreResponse> {
    const response = await this.core.getWithToken(path, await this.bearer());
    if (response.status !== 401) return response;
    await this.renew(true);
    return this.core.getWithToken(path, await this.bearer());
  }

  /** GET `path`; its body unless the status is 200 (a CliError naming Core's answer). */
  async read(path: string): Promise<unknown> {
    const response = await this.get(path);
    if (response.status !== 200) throw new CliError(`${path}: ${coreHttpError(response).message}`);
    return response.body;
  }

  private async bearer(): Promise<string> {
    const current = this.current;
    if (
      current !== null &&
      systemClock.nowSeconds() < current.access_token_expires_at - REFRESH_MARGIN_SECONDS
    ) {
      return current.access_token;
    }
    return (await this.renew(false)).access_token;
  }

  /** Refreshes the session (`refused`: Core refused its access token), else signs in with the key. */
  private async renew(refused: boolean): Promise<StoredSession> {
    let reason = refused ? "Core refused the access token" : "";
    if (this.current !== null) {
      const outcome = await this.core.refresh(this.current);
      if ("session" in outcome) return this.keep(outcome.session);
      reason = `Core refused the refresh token (${outcome.refused})`;
      this.current = null;
      this.store?.remove(this.core.baseUrl);
    }
    if (this.wallet === null) {
      throw new CliError(
        `the session stored for ${this.core.baseUrl} is no longer valid: ${reason}; ` +
          "sign in again: npm run cli -- login --account <i> (or --key-file <file>)",
      );
    }
    return this.keep(await this.core.signIn(this.wallet));
  }

  /** The new session, stored before its access token is used (the spent refresh token must not come back). */
  private keep(session: StoredSession): StoredSession {
    this.store?.save(this.core.baseUrl, session);
    this.current = session;
    return session;
  }
}
