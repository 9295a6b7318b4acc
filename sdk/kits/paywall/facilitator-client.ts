/**
 * The seller's HTTP calls to its facilitator (`POST /verify`, `POST /settle`).
 * Transport failures (connection refused, timeout, a body that is not JSON)
 * become {@link FacilitatorUnavailableError}; every answer with a JSON body
 * is returned with its status for the middleware to interpret.
 */

export type PaywallFetch = (input: string, init: RequestInit) => Promise<Response>;

/** The facilitator could not be reached or did not answer usable JSON in time. */
export class FacilitatorUnavailableError extends Error {
  override readonly name = "FacilitatorUnavailableError";
}

export interface FacilitatorAnswer {
  status: number;
  body: unknown;
}

export class FacilitatorClient {
  private readonly verifyUrl: string;
  private readonly settleUrl: string;

  constructor(
    baseUrl: string,
    private readonly fetchImpl: PaywallFetch,
    private readonly timeoutMs: number,
  ) {
    this.verifyUrl = new URL("verify", withSlash(baseUrl)).toString();
    this.settleUrl = new URL("settle", withSlash(baseUrl)).toString();
  }

  verify(body: unknown): Promise<FacilitatorAnswer> {
    return this.post(this.verifyUrl, body);
  }

  settle(body: unknown): Promise<FacilitatorAnswer> {
    return this.post(this.settleUrl, body);
  }

  private async post(url: string, body: unknown): Promise<FacilitatorAnswer> {
    let response: Response;
    let text: string;
    try {
      response = await this.fetchImpl(url, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json" },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      text = await response.text();
    } catch (error) {
      const reason = error instanceof Error && error.name === "TimeoutError" ? "timed out" : "failed";
      throw new FacilitatorUnavailableError(`POST ${url} ${reason}: ${(error as Error).message}`);
    }
    try {
      return { status: response.status, body: JSON.parse(text) as unknown };
    } catch {
      throw new FacilitatorUnavailableError(`POST ${url} answered ${response.status} without a JSON body`);
    }
  }
}

/** `new URL("verify", base)` keeps a base path only when it ends in a slash. */
function withSlash(url: string): string {
  return url.endsWith("/") ? url : url + "/";
}
