/**
 * Request validation (express-validator) for what the routes take besides a protocol body: path
 * parameters, query strings, the auth and admin bodies. Each field is checked and converted by a parser
 * (the sdk's where one exists: `parseAddress`, `parseBytes32`, ...), whose WireError message names the
 * field; the first failure answers 400 `invalid_request` with that message (docs/operator-api.md), through
 * the one error mapping of error-handler.ts. Routes read the converted values with {@link validated}.
 * Guarantee bodies are the sdk's protocol (parseSignedGuarantee), not re-described here.
 */
import type { Request, RequestHandler } from "express";
import { body, matchedData, param, query, type ValidationChain, validationResult } from "express-validator";
import { WireError } from "../../sdk/errors";
import { badRequest } from "./errors";

/** `chain`'s field must pass `parse`; it is then replaced by what `parse` returns. */
export function parsedBy<T>(chain: ValidationChain, parse: (value: unknown) => T): ValidationChain {
  return chain
    .custom((value) => {
      parse(value);
      return true;
    })
    .bail()
    .customSanitizer((value) => parse(value));
}

/** A path parameter, parsed. */
export const pathParam = <T>(name: string, parse: (value: string, field: string) => T) =>
  parsedBy(param(name), (value) => parse(String(value), name));

/** A query parameter given at most once, as a string, then parsed; absent stays absent. */
export const queryParam = <T>(name: string, parse: (value: string, field: string) => T) =>
  parsedBy(query(name).optional(), (value) => parse(queryString(value, name), name));

/** A JSON body field, parsed (absent fields reach `parse` as undefined). */
export const bodyField = <T>(name: string, parse: (value: unknown, field: string) => T) =>
  parsedBy(body(name), (value) => parse(value, name));

/** The whole JSON body, parsed (e.g. that it is an object, before its fields are checked). */
export const wholeBody = <T>(parse: (value: unknown) => T) => parsedBy(body(), parse);

function queryString(value: unknown, name: string): string {
  if (typeof value !== "string") throw new WireError(name, "must be given once, as a string");
  return value;
}

/**
 * Runs `chains` in order, then refuses the request with the first failure: 400 `invalid_request`, the
 * parser's message (`field: what is wrong`).
 */
export function validate(...chains: ValidationChain[]): RequestHandler[] {
  const refuseInvalid: RequestHandler = (req, _res, next) => {
    const [first] = validationResult(req).array({ onlyFirstError: true });
    if (first !== undefined) throw badRequest("invalid_request", String(first.msg));
    next();
  };
  return [...chains, refuseInvalid];
}

/** The fields {@link validate} checked, converted by their parsers. */
export function validated<T extends Record<string, unknown>>(req: Request): T {
  return matchedData(req, { includeOptionals: false }) as T;
}
