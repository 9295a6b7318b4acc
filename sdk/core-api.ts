/**
 * Core's HTTP API shapes, all of them: every schema exported by the `api-*.ts` modules, by its exported
 * name: the `components.schemas` of Core's OpenAPI document (through `openApiComponents`,
 * sdk/openapi.ts), so the document is generated from the very schemas whose inferred types the routes
 * answer with and the console reads.
 */
import { z } from "zod/v4";
import * as admin from "./api-admin";
import * as clearing from "./api-clearing";
import * as common from "./api-common";
import * as guarantees from "./api-guarantees";
import * as publicApi from "./api-public";

const EXPORTS = { ...common, ...guarantees, ...publicApi, ...clearing, ...admin };
type Exports = typeof EXPORTS;

/** The name of a component of Core's OpenAPI document (a schema exported by an `api-*.ts` module). */
export type CoreSchemaName = {
  [K in keyof Exports]: Exports[K] extends z.ZodType ? (K extends "ApiError" ? "Error" : K) : never;
}[keyof Exports];

/** `ApiError` is published as `Error` (the name the documents always had; `Error` would shadow the global). */
const componentName = (exported: string): string => (exported === "ApiError" ? "Error" : exported);

/** Each schema of the API by its component name. */
export const CORE_API_SCHEMAS: ReadonlyMap<CoreSchemaName, z.ZodType> = new Map(
  Object.entries(EXPORTS as Record<string, unknown>).flatMap(([name, value]) =>
    value instanceof z.ZodType ? [[componentName(name) as CoreSchemaName, value]] : [],
  ),
);
