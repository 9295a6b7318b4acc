/**
 * OpenAPI 3.1 description of Core's HTTP API (docs/operator-api.md, docs/operator-auth.md), generated:
 * every request and answer shape is a schema of the sdk (`sdk/api-*.ts`, collected by `sdk/core-api.ts`)
 * whose inferred type the routes answer with; every operation (path, parameters, status codes, error
 * codes, wording) is declared by the route module that mounts it (`*_OPERATIONS`, operations.ts). Served
 * at `GET /openapi.json`; test/operator/openapi.test.ts checks real responses against it.
 */

import { CORE_API_SCHEMAS } from "../../sdk/core-api";
import { openApiComponents } from "../../sdk/openapi";
import { openApiPaths } from "../../runtime/api-operations";
import { AUTH_OPERATIONS } from "./auth-routes";
import { CONSOLE_API_OPERATIONS } from "./console-api-routes";
import { CYCLE_OPERATIONS } from "./cycle-routes";
import { GUARANTEE_OPERATIONS } from "./guarantee-routes";
import { jsonAnswer, operation } from "./operations";
import { PUBLIC_OPERATIONS } from "./public-routes";
import { SCHEDULE_OPERATIONS } from "./schedule-routes";
import { USER_OPERATIONS } from "./user-routes";
import { WEBHOOK_ADMIN_OPERATIONS } from "./webhook-admin-routes";

/** `GET /openapi.json`, this document's own route (openapi.ts). */
export const OPENAPI_OPERATIONS = {
  document: operation("get", "/openapi.json", {
    tags: ["ops"],
    summary: "This document",
    responses: { "200": jsonAnswer("OpenAPI 3.1 document.", { type: "object" }) },
  }),
};

/** Every operation Core serves, by route module. */
const OPERATIONS = [
  AUTH_OPERATIONS,
  PUBLIC_OPERATIONS,
  GUARANTEE_OPERATIONS,
  USER_OPERATIONS,
  CYCLE_OPERATIONS,
  SCHEDULE_OPERATIONS,
  WEBHOOK_ADMIN_OPERATIONS,
  CONSOLE_API_OPERATIONS,
  OPENAPI_OPERATIONS,
].flatMap((declared) => Object.values(declared));

export const CORE_OPENAPI = {
  openapi: "3.1.0",
  jsonSchemaDialect: "https://json-schema.org/draft/2020-12/schema",
  info: {
    title: "Surety Core (operator) API",
    version: "0.1.0",
    description:
      "Collateral-backed payment guarantees: sign-in (SIWE), public parameters, guarantee issuance and reads, " +
      "V2 finalization, clearing cycles and proofs, withdrawals, webhook subscriptions (admin). " +
      "Every error body is `{error, code}`; `error` names the field at fault for bad input. " +
      "Every response carries `X-Request-Id`.",
  },
  servers: [{ url: "http://127.0.0.1:8080", description: "devnet default" }],
  tags: [
    { name: "auth" },
    { name: "public" },
    { name: "guarantees" },
    { name: "clearing" },
    { name: "admin" },
    { name: "ops" },
  ],
  components: {
    securitySchemes: {
      bearer: { type: "http", scheme: "bearer", bearerFormat: "JWT (HS256) from POST /auth/verify" },
    },
    schemas: openApiComponents(CORE_API_SCHEMAS),
  },
  paths: openApiPaths(OPERATIONS),
};
