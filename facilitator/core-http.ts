/**
 * One JSON request to Core with a deadline. Transport failures (connection
 * refused, timeout, reset) become {@link CoreUnavailableError}; every HTTP
 * answer, whatever its status, is returned for the caller to interpret.
 */

export interface CoreResponse {
  status: number;
  /** Parsed JSON body; the raw text when it is not JSON; null when empty. */
  body: unknown;
}

/** Core could not be reached or did not answer in time. */
export class CoreUnavailableError extends Error {
  override readonly name = "CoreUnavailableError";

  /**
   * @param maybeDelivered the request may have reached Core and been acted on (a timeout, a reset
   *   connection), as opposed to never sent (connection refused, unknown host)
   */
  constructor(
    message: string,
    readonly maybeDelivered = false,
  ) {
    super(message);
  }
}

/** Connection failures after which the request cannot have reached the server. */
const NOT_SENT_CODES = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH"]);

/** Core answered, but not what the interface promises (a bug or a version mismatch on Core's side). */
export class CoreProtocolError extends Error {
  override readonly name = "CoreProtocolError";
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

/** Core answered a request with an error status (for calls other than issuance, which returns outcomes). */
export class CoreHttpError extends Error {
  override readonly name = "CoreHttpError";
  constructor(
    readonly status: number,
    /** Core's machine-readable `code`, when its body has one. */
    readonly code: string | null,
    /** Core's `error` message, or a description of the body. */
    readonly coreMessage: string,
    readonly body: unknown,
  ) {
    super(`Core answered ${status}${code ? ` ${code}` : ""}: ${coreMessage}`);
  }
}

export interface CoreRequest {
  method: "GET" | "POST";
  path: string;
  json?: unknown;
  bearer?: string;
}

export type CoreFetch = (request: CoreRequest) => Promise<CoreResponse>;

/** Longest error text taken over from Core into our answers and logs. */
const MAX_CORE_MESSAGE_CHARS = 500;

/** A fetch-based {@link CoreFetch} for `baseUrl` with a per-request deadline. */
export function coreFetch(baseUrl: string, timeoutMs: number): CoreFetch {
  return async ({ method, path, json, bearer }) => {
    const headers: Record<string, string> = { accept: "application/json" };
    if (json !== undefined) headers["content-type"] = "application/json";
    if (bearer !== undefined) headers.authorization = `Bearer ${bearer}`;
    const signal = AbortSignal.timeout(timeoutMs);
    let status: number;
    let text: string;
    try {
      // The deadline covers reading the body too (the signal stays attached to the stream).
      const response = await fetch(baseUrl + path, {
        method,
        headers,
        body: json === undefined ? undefined : JSON.stringify(json),
        redirect: "error",
        signal,
      });
      status = response.status;
      text = await response.text();
    } catch (error) {
      if (signal.aborted) {
        throw new CoreUnavailableError(`Core did not answer ${method} ${path} within ${timeoutMs} ms`, true);
      }
      const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : "";
      const code = error instanceof Error ? (error.cause as { code?: unknown } | undefined)?.code : undefined;
      const notSent = typeof code === "string" && NOT_SENT_CODES.has(code);
      throw new CoreUnavailableError(`Core request ${method} ${path} failed${cause}`, !notSent);
    }
    return { status, body: parseBody(text) };
  };
}

function parseBody(text: string): unknown {
  if (text === "") return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** Core's `{error, code}` error body (docs/protocol.md, "Wire values"), tolerating other shapes. */
export function coreErrorOf(body: unknown): { code: string | null; message: string } {
  if (typeof body === "object" && body !== null && !Array.isArray(body)) {
    const { error, code } = body as { error?: unknown; code?: unknown };
    return {
      code: typeof code === "string" && code !== "" ? code.slice(0, MAX_CORE_MESSAGE_CHARS) : null,
      message: typeof error === "string" ? error.slice(0, MAX_CORE_MESSAGE_CHARS) : "no error message",
    };
  }
  if (typeof body === "string" && body !== "") {
    return { code: null, message: body.slice(0, MAX_CORE_MESSAGE_CHARS) };
  }
  return { code: null, message: "empty response body" };
}

/** The HTTP answer as a CoreHttpError. */
export function coreHttpError(response: CoreResponse): CoreHttpError {
  const { code, message } = coreErrorOf(response.body);
  return new CoreHttpError(response.status, code, message, response.body);
}
