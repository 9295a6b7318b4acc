/**
 * The facilitator's HTTP client for Core: public parameters (cached) and
 * guarantee issuance under the facilitator's SIWE session. It speaks the
 * interface spec only; nothing here knows Core's internals.
 *
 * Several Core replicas (`SURETY_FACILITATOR_CORE_URL=url1,url2,…`, docs/facilitator.md): each URL has
 * its own SIWE session; each call starts at the next URL in turn (round robin) and moves on to the next
 * one when a Core cannot be reached, times out or answers 5xx. Retrying an issuance on another replica is
 * safe: the guarantee id is derived from the signed claims, so a replica that finds it stored answers
 * 409 with the stored certificate, which is a success here (`replayed`).
 */
import { Wallet } from "ethers";
import { type Certificate, parseCertificate } from "../sdk/certificate";
import type { WireSignedGuarantee } from "../sdk/claims";
import { WireError } from "../sdk/errors";
import type { WirePublicParams } from "../sdk/public-params";
import type { Clock } from "./clock";
import type { FacilitatorConfig } from "./config";
import {
  CoreProtocolError,
  type CoreFetch,
  CoreHttpError,
  type CoreRequest,
  type CoreResponse,
  CoreUnavailableError,
  coreErrorOf,
  coreFetch,
  coreHttpError,
} from "./core-http";
import { CoreSession } from "./core-session";
import { type DeploymentParams, deploymentFromPublicParams } from "./deployment";

/** What Core answered to `POST /core/guarantees`. Transport failures are thrown instead. */
export type IssueOutcome =
  | {
      ok: true;
      certificate: Certificate;
      /**
       * Core answered 409 with the stored certificate: this exact guarantee was issued before this call.
       * False when an earlier attempt of this same call may have issued it (a Core that timed out or
       * dropped the connection before another answered 409): that 409 is the facilitator's own retry.
       */
      replayed: boolean;
    }
  | {
      ok: false;
      /** Core's status (never 401: the client signs in again and retries once). */
      status: number;
      code: string | null;
      error: string;
      body: unknown;
    };

/** What the facilitator needs from Core; tests and alternative transports implement it. */
export interface CoreApi {
  /** Core's public params, parsed; cached for the configured TTL unless `fresh`. */
  getPublicParams(options?: { fresh?: boolean }): Promise<WirePublicParams>;
  /** The deployment derived from the (cached) public params; built once per load. */
  getDeployment(options?: { fresh?: boolean }): Promise<DeploymentParams>;
  issueGuarantee(signed: WireSignedGuarantee): Promise<IssueOutcome>;
}

interface Loaded {
  params: WirePublicParams;
  deployment: DeploymentParams;
  /** Unix seconds after which the params are fetched again. */
  staleAt: number;
}

export interface CoreClientOptions {
  config: Pick<
    FacilitatorConfig,
    "coreUrl" | "coreTimeoutMs" | "privateKey" | "chainId" | "publicParamsTtlSeconds"
  >;
  clock: Clock;
  /**
   * Replace the HTTP transport: one per Core (defaults to fetch against each URL of `config.coreUrl`, a
   * comma-separated list).
   */
  fetchCore?: CoreFetch | readonly CoreFetch[];
}

/** The Core URLs of `coreUrl` (one, or several separated by commas). */
export function coreUrlsOf(coreUrl: string): string[] {
  return coreUrl.split(",").filter((url) => url !== "");
}

/** One Core replica: its transport and the facilitator's session with it. */
interface Endpoint {
  fetchCore: CoreFetch;
  session: CoreSession;
}

export class CoreClient implements CoreApi {
  private readonly endpoints: readonly Endpoint[];
  /** Where the next call starts (round robin). */
  private next = 0;
  private loaded: Loaded | null = null;
  private loading: Promise<Loaded> | null = null;

  constructor(private readonly options: CoreClientOptions) {
    const { config, clock } = options;
    const transports =
      options.fetchCore === undefined
        ? coreUrlsOf(config.coreUrl).map((url) => coreFetch(url, config.coreTimeoutMs))
        : typeof options.fetchCore === "function"
          ? [options.fetchCore]
          : [...options.fetchCore];
    if (transports.length === 0) throw new Error("at least one Core URL is required");
    const wallet = new Wallet(config.privateKey);
    this.endpoints = transports.map((fetchCore) => ({
      fetchCore,
      session: new CoreSession(fetchCore, wallet, clock),
    }));
  }

  /**
   * Runs `call` on each Core in turn, starting at the next one, until one answers below 500: that answer
   * (or the last 5xx, when every Core answered one) is returned. When no Core could be reached the last
   * transport error is thrown, naming how many were tried.
   */
  private async failover(
    call: (endpoint: Endpoint) => Promise<CoreResponse>,
    attempts: { inconclusive: number } = { inconclusive: 0 },
  ): Promise<CoreResponse> {
    const count = this.endpoints.length;
    const start = this.next;
    this.next = (start + 1) % count;
    let lastAnswer: CoreResponse | null = null;
    let lastError: Error | null = null;
    for (let i = 0; i < count; i++) {
      let response: CoreResponse;
      try {
        response = await call(this.endpoints[(start + i) % count]);
      } catch (error) {
        // Unreachable, or its sign-in failed on its side: the next Core may do better.
        const serverSide = error instanceof CoreHttpError && error.status >= 500;
        if (!(error instanceof CoreUnavailableError) && !serverSide) throw error;
        lastError = error as Error;
        if (error instanceof CoreUnavailableError && error.maybeDelivered) attempts.inconclusive++;
        continue;
      }
      if (response.status < 500) return response;
      lastAnswer = response; // Core answers only after its commit, or refuses before: a 5xx issued nothing
    }
    if (lastAnswer !== null) return lastAnswer;
    if (count === 1 || !(lastError instanceof CoreUnavailableError)) throw lastError!;
    throw new CoreUnavailableError(`no Core of ${count} could be reached (last: ${lastError.message})`);
  }

  private request(request: CoreRequest): Promise<CoreResponse> {
    return this.failover((endpoint) => endpoint.fetchCore(request));
  }

  async getPublicParams(options: { fresh?: boolean } = {}): Promise<WirePublicParams> {
    return (await this.load(options.fresh === true)).params;
  }

  async getDeployment(options: { fresh?: boolean } = {}): Promise<DeploymentParams> {
    return (await this.load(options.fresh === true)).deployment;
  }

  /**
   * Loads the params when missing, stale or `fresh` is asked for. A failed
   * reload rethrows when nothing is cached (or `fresh` was asked for: health
   * must see Core as it is now); otherwise the last good params are kept so
   * that `/verify`, which needs no Core round trip, keeps working while Core
   * is briefly away. Settlement still needs Core, so nothing is approved
   * for good on stale params alone.
   */
  private async load(fresh: boolean): Promise<Loaded> {
    const cached = this.loaded;
    if (!fresh && cached !== null && this.options.clock.nowSeconds() < cached.staleAt) return cached;
    this.loading ??= this.fetchPublicParams().finally(() => {
      this.loading = null;
    });
    try {
      this.loaded = await this.loading;
      return this.loaded;
    } catch (error) {
      if (fresh || cached === null) throw error;
      return cached;
    }
  }

  private async fetchPublicParams(): Promise<Loaded> {
    const response = await this.request({ method: "GET", path: "/core/public-params" });
    if (response.status !== 200) throw coreHttpError(response);
    let deployment: DeploymentParams;
    try {
      deployment = deploymentFromPublicParams(response.body);
    } catch (error) {
      if (error instanceof WireError) {
        throw new CoreProtocolError(`Core's public params are unusable: ${error.message}`, response.status);
      }
      throw error;
    }
    const expected = this.options.config.chainId;
    if (expected !== null && deployment.chainId !== expected) {
      throw new CoreProtocolError(
        `Core serves chain ${deployment.chainId}, the facilitator is configured for chain ${expected}`,
        response.status,
      );
    }
    const { clock, config } = this.options;
    return {
      params: response.body as WirePublicParams,
      deployment,
      staleAt: clock.nowSeconds() + config.publicParamsTtlSeconds,
    };
  }

  /**
   * `POST /core/guarantees` with the session's bearer token. A 401 means the
   * session is gone (expired, revoked, Core restarted): sign in again and
   * retry once. The signed request is the same bytes both times, so a retry
   * after a lost answer can only meet Core's idempotent 409.
   */
  async issueGuarantee(signed: WireSignedGuarantee): Promise<IssueOutcome> {
    const attempts = { inconclusive: 0 };
    const response = await this.failover(async (endpoint) => {
      const first = await this.postGuarantee(endpoint, signed);
      return first.status === 401 ? this.postGuarantee(endpoint, signed) : first;
    }, attempts);
    const outcome = issueOutcome(response);
    // A Core that timed out or dropped the connection may have issued it before another answered 409.
    if (outcome.ok && outcome.replayed && attempts.inconclusive > 0) return { ...outcome, replayed: false };
    return outcome;
  }

  private async postGuarantee(endpoint: Endpoint, signed: WireSignedGuarantee): Promise<CoreResponse> {
    const token = await endpoint.session.accessToken();
    const response = await endpoint.fetchCore({
      method: "POST",
      path: "/core/guarantees",
      json: signed,
      bearer: token,
    });
    if (response.status === 401) endpoint.session.invalidate(token);
    return response;
  }
}

function issueOutcome(response: CoreResponse): IssueOutcome {
  const { status, body } = response;
  if (status === 200) {
    try {
      return { ok: true, certificate: parseCertificate(body, "certificate"), replayed: false };
    } catch (error) {
      const detail = error instanceof Error ? error.message : String(error);
      throw new CoreProtocolError(`Core's certificate is malformed: ${detail}`, status);
    }
  }
  // A 409 for a byte-identical request carries the stored certificate (docs/operator-api.md, "POST /core/guarantees").
  const stored = status === 409 ? (body as { certificate?: unknown } | null)?.certificate : undefined;
  if (stored !== undefined && stored !== null) {
    try {
      return { ok: true, certificate: parseCertificate(stored, "certificate"), replayed: true };
    } catch (error) {
      const detail = error instanceof Error ? error.message : String(error);
      throw new CoreProtocolError(`Core's stored certificate is malformed: ${detail}`, status);
    }
  }
  const { code, message } = coreErrorOf(body);
  return { ok: false, status, code, error: message, body };
}
