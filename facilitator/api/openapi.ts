/** `GET /openapi.json`: the facilitator's OpenAPI 3.1 document (openapi-document.ts). */
import { Router } from "express";
import { FACILITATOR_OPENAPI } from "./openapi-document";

export const OPENAPI_PATH = "/openapi.json";

export function openapiRouter(): Router {
  const router = Router();
  const body = JSON.stringify(FACILITATOR_OPENAPI);
  router.get(OPENAPI_PATH, (_req, res) => {
    res.type("application/json").send(body);
  });
  return router;
}
