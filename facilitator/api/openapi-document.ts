/**
 * OpenAPI 3.1 description of the facilitator's HTTP API (docs/facilitator.md), generated: its shapes are
 * the sdk's schemas (`sdk/api-facilitator.ts`), its operations (paths, status codes, wording) are declared
 * by the routes that mount them (`FACILITATOR_OPERATIONS`, routes.ts; runtime/api-operations.ts). Served
 * at `GET /openapi.json`; test/facilitator/openapi.test.ts checks real responses against it.
 */
import { FACILITATOR_API_SCHEMAS } from "../../sdk/api-facilitator";
import { openApiComponents } from "../../sdk/openapi";
import { jsonAnswer, openApiPaths, operation } from "../../runtime/api-operations";
import { FACILITATOR_OPERATIONS } from "./routes";

/** `GET /openapi.json`, this document's own route (openapi.ts). */
export const OPENAPI_OPERATIONS = {
  document: operation("get", "/openapi.json", {
    summary: "This document",
    responses: { "200": jsonAnswer("OpenAPI 3.1 document.", { type: "object" }) },
  }),
};

export const FACILITATOR_OPENAPI = {
  openapi: "3.1.0",
  jsonSchemaDialect: "https://json-schema.org/draft/2020-12/schema",
  info: {
    title: "Surety facilitator API",
    version: "0.1.0",
    description:
      "x402 facilitator for the `svc-credit` scheme: `/verify` checks a payment without contacting Core, " +
      "`/settle` turns it into Core's BLS certificate. x402 v1 and v2 envelopes are both accepted.",
  },
  servers: [{ url: "http://127.0.0.1:8402", description: "devnet default" }],
  components: {
    schemas: openApiComponents(FACILITATOR_API_SCHEMAS),
  },
  paths: openApiPaths([...Object.values(FACILITATOR_OPERATIONS), ...Object.values(OPENAPI_OPERATIONS)]),
};
