/** `GET /openapi.json`: the facilitator's OpenAPI 3.1 document (openapi-document.ts). */
import { Router } from "express";
import { mount } from "../../runtime/api-operations";
import { FACILITATOR_OPENAPI, OPENAPI_OPERATIONS } from "./openapi-document";

export function openapiRouter(): Router {
  const router = Router();
  const body = JSON.stringify(FACILITATOR_OPENAPI);
  mount(router, OPENAPI_OPERATIONS.document, (_req, res) => {
    res.type("application/json").send(body);
  });
  return router;
}
