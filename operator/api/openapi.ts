/** `GET /openapi.json`: Core's OpenAPI 3.1 document (openapi-document.ts). */
import { Router } from "express";
import type { RouteModule } from "./context";
import { CORE_OPENAPI, OPENAPI_OPERATIONS } from "./openapi-document";
import { mount } from "./operations";

export const openapiRoutes: RouteModule = () => {
  const router = Router();
  const body = JSON.stringify(CORE_OPENAPI);
  mount(router, OPENAPI_OPERATIONS.document, (_req, res) => {
    res.type("application/json").send(body);
  });
  return router;
};
