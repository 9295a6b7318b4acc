/** `GET /openapi.json`: Core's OpenAPI 3.1 document (openapi-document.ts). */
import { Router } from "express";
import type { RouteModule } from "./context";
import { CORE_OPENAPI } from "./openapi-document";

export const OPENAPI_PATH = "/openapi.json";

export const openapiRoutes: RouteModule = () => {
  const router = Router();
  const body = JSON.stringify(CORE_OPENAPI);
  router.get(OPENAPI_PATH, (_req, res) => {
    res.type("application/json").send(body);
  });
  return router;
};
