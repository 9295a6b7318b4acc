/**
 * HTTP errors with a machine-readable code (docs/protocol.md, "Wire values"). Route code
 * throws these; the error middleware turns them into `{ error, code }`.
 */
export class HttpError extends Error {
  override readonly name = "HttpError";

  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** Extra response headers, e.g. `WWW-Authenticate` on 401. */
    readonly headers: Readonly<Record<string, string>> = {},
    /** Extra body fields next to `error` and `code` (e.g. the stored `certificate` of a 409). */
    readonly extra: Readonly<Record<string, unknown>> = {},
  ) {
    super(message);
  }
}

export type { ErrorBody } from "../../sdk/errors";

export function badRequest(code: string, message: string): HttpError {
  return new HttpError(400, code, message);
}

export function unauthorized(code: string, message: string, headers: Record<string, string> = {}): HttpError {
  return new HttpError(401, code, message, headers);
}

export function forbidden(code: string, message: string): HttpError {
  return new HttpError(403, code, message);
}

export function notFound(code: string, message: string): HttpError {
  return new HttpError(404, code, message);
}

export function conflict(code: string, message: string): HttpError {
  return new HttpError(409, code, message);
}
