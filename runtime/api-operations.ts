/**
 * Routes declared once, as data: each route module of Core and the facilitator declares its operations
 * (method, OpenAPI path, and the OpenAPI Operation Object: summary, auth, parameters, request body,
 * answers by status with their schemas and error codes), mounts its Express handlers from them
 * ({@link mount}) and exports them; the OpenAPI documents assemble their `paths` from those exports
 * ({@link openApiPaths}). Schemas are named (`$ref`), never loaded, so a route module loads no zod.
 */
import type { RequestHandler, Router } from "express";

type Json = Record<string, unknown>;

export type HttpMethod = "get" | "post" | "delete";

/** One HTTP operation: where it is mounted and what the OpenAPI document says of it. */
export interface ApiOperation {
  readonly method: HttpMethod;
  /** The OpenAPI spelling (`/core/cycles/{id}`); Express's (`:id`) is derived. */
  readonly path: string;
  /** The OpenAPI Operation Object. */
  readonly doc: Json & { responses: Json };
}

export const operation = (method: HttpMethod, path: string, doc: ApiOperation["doc"]): ApiOperation => ({
  method,
  path,
  doc,
});

/** Express's spelling of an OpenAPI path: `{id}` becomes `:id`. */
export const expressPath = (path: string): string => path.replace(/\{(\w+)\}/g, ":$1");

/** Mounts `handlers` on `router` at the operation's method and path. */
export function mount(router: Router, op: ApiOperation, ...handlers: RequestHandler[]): void {
  router[op.method](expressPath(op.path), ...handlers);
}

/** The `paths` of an OpenAPI document: the operations grouped by path, in the order given. */
export function openApiPaths(operations: Iterable<ApiOperation>): Record<string, Record<string, Json>> {
  const paths: Record<string, Record<string, Json>> = {};
  for (const { method, path, doc } of operations) (paths[path] ??= {})[method] = doc;
  return paths;
}

/** A reference to a named schema of the document's `components.schemas`. */
export const schemaRef = (name: string): Json => ({ $ref: `#/components/schemas/${name}` });

/** The common error shape (`Error`), its `code` limited to `codes` when given. */
export function errorSchema(codes?: readonly string[]): Json {
  return codes
    ? { allOf: [schemaRef("Error")], type: "object", properties: { code: { enum: [...codes] } } }
    : schemaRef("Error");
}

/** An answer with a JSON body. */
export function jsonAnswer(description: string, schema: Json, headers?: Json): Json {
  return { description, content: { "application/json": { schema } }, ...(headers ? { headers } : {}) };
}

/** An error answer whose `code` is one of `codes`. */
export const errorAnswer = (description: string, codes?: readonly string[]): Json =>
  jsonAnswer(description, errorSchema(codes));

/** A required JSON request body. */
export const jsonBody = (schema: Json): Json => ({
  required: true,
  content: { "application/json": { schema } },
});
