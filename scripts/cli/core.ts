/**
 * The CLI's view of Core over HTTP: public endpoints (public params, cycle
 * proofs) without auth, and the endpoints that need a bearer token, signed in
 * with the caller's wallet through the same SIWE session code the facilitator uses.
 */
import type { Wallet } from "ethers";
import { systemClock } from "../../facilitator/clock";
import { coreFetch, coreHttpError, type CoreFetch } from "../../facilitator/core-http";
import { CoreSession } from "../../facilitator/core-session";
import { CliError } from "./context";

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

  private async call<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      if (error instanceof CliError) throw error;
      throw new CliError(`Core at ${this.baseUrl}: ${(error as Error).message}`);
    }
  }
}
