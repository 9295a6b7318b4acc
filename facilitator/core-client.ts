/**
 * The facilitator's HTTP client for Core: public parameters (cached) and
 * guarantee issuance under the facilitator's SIWE session. It speaks the
 * interface spec only; nothing here knows Core's internals.
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
  type CoreResponse,
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
      /** Core answered 409 with the stored certificate: this exact guarantee was issued before. */
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
  /** Replace the HTTP transport (defaults to fetch against `config.coreUrl`). */
  fetchCore?: CoreFetch;
}

export class CoreClient implements CoreApi {
  private readonly fetchCore: CoreFetch;
  private readonly session: CoreSession;
  private loaded: Loaded | null = null;
  private loading: Promise<Loaded> | null = null;

  constructor(private readonly options: CoreClientOptions) {
    const { config, clock } = options;
    this.fetchCore = options.fetchCore ?? coreFetch(config.coreUrl, config.coreTimeoutMs);
    this.session = new CoreSession(this.fetchCore, new Wallet(config.privateKey), clock);
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
    const response = await this.fetchCore({ method: "GET", path: "/core/public-params" });
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
    let response = await this.postGuarantee(signed);
    if (response.status === 401) response = await this.postGuarantee(signed);
    return issueOutcome(response);
  }

  private async postGuarantee(signed: WireSignedGuarantee): Promise<CoreResponse> {
    const token = await this.session.accessToken();
    const response = await this.fetchCore({
      method: "POST",
      path: "/core/guarantees",
      json: signed,
      bearer: token,
    });
    if (response.status === 401) this.session.invalidate(token);
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
