/**
 * `createFacilitatorApp`: the facilitator's HTTP application without a
 * listening socket (server.ts owns that). Order: JSON body parser, routes,
 * 404, error handler; `/settle` carries its own parser and error handler so
 * that even a malformed settle body is answered in settle's shape.
 */
import express, { type Express } from "express";
import { jsonBodyParser } from "../../runtime/client-errors";
import type { FacilitatorContext } from "./context";
import { errorHandler, notFoundHandler, settleErrorHandler } from "./errors";
import { openapiRouter } from "./openapi";
import { FACILITATOR_OPERATIONS, healthRouter, settleRouter, supportedRouter, verifyRouter } from "./routes";

/** Requests are small JSON documents (a V2 payload is a few KiB); anything larger is refused (413). */
export const JSON_BODY_LIMIT_BYTES = 64 * 1024; // 64 KiB

export function createFacilitatorApp(context: FacilitatorContext): Express {
  const app = express();
  app.disable("x-powered-by");
  // Answers are not cached by validators (every route but two GETs is a POST): no SHA-1 of every body for an ETag.
  app.disable("etag");
  const json = jsonBodyParser(JSON_BODY_LIMIT_BYTES);

  const settle = express.Router();
  settle.use(json);
  settle.use(settleRouter(context));
  settle.use(settleErrorHandler(context.logger));
  app.use(FACILITATOR_OPERATIONS.settle.path, settle);

  app.use(json);
  app.use(verifyRouter(context));
  app.use(supportedRouter(context));
  app.use(healthRouter(context));
  app.use(openapiRouter());
  app.use(notFoundHandler());
  app.use(errorHandler(context.logger));
  return app;
}
