/**
 * `mountCoreRoutes`: the Core HTTP application on services it is handed (operator/app/ wires
 * them), without a listening socket (server.ts owns that). Order: request id + log line, metrics,
 * JSON body parser, route modules, 404, error handler. `createCoreApp` wires the services and
 * mounts them in one call (tests).
 */
import express, { type Express } from "express";
import { jsonBodyParser } from "../../runtime/client-errors";
import { type CoreDeps, type CoreServices, createCoreContext } from "../app/context";
import type { CoreContext, RouteModule } from "./context";
import { cycleRoutes } from "./cycle-routes";
import { authRouter } from "./auth-routes";
import { consoleApiRoutes } from "./console-api-routes";
import { consoleRoutes } from "./console-routes";
import { errorHandler, notFoundHandler } from "./error-handler";
import { guaranteeRoutes } from "./guarantee-routes";
import { userRoutes } from "./user-routes";
import { openapiRoutes } from "./openapi";
import { publicRoutes } from "./public-routes";
import { requestContext } from "./request-context";
import { scheduleRoutes } from "./schedule-routes";
import { webhookAdminRoutes } from "./webhook-admin-routes";

/** Requests are small JSON documents; anything larger is refused before parsing (413). */
export const JSON_BODY_LIMIT_BYTES = 64 * 1024; // 64 KiB

/**
 * Route modules every Core serves, in mount order. Their paths are disjoint, so the order changes no
 * answer; the guarantee routes come first because `POST /core/guarantees` is the hot path and each
 * router it passes through costs a dispatch (closures, path matching) per request.
 */
export const CORE_ROUTES: readonly RouteModule[] = [
  guaranteeRoutes,
  userRoutes,
  (context) => authRouter(context.auth),
  publicRoutes,
  cycleRoutes,
  scheduleRoutes,
  webhookAdminRoutes,
  openapiRoutes,
  consoleApiRoutes,
  consoleRoutes,
];

export interface CoreAppOptions extends CoreDeps {
  /** Replace the services built from the deps (e.g. a pre-built AuthService). */
  services?: Partial<CoreServices>;
  /** Route modules mounted after {@link CORE_ROUTES}. */
  routes?: readonly RouteModule[];
}

export interface CoreApp {
  app: Express;
  context: CoreContext;
}

/** The Core HTTP application on the services of `context`: {@link CORE_ROUTES}, then `routes`. */
export function mountCoreRoutes(context: CoreContext, routes: readonly RouteModule[] = []): Express {
  const app = express();
  app.disable("x-powered-by");
  // API responses are not cached by validators; hashing every body for an ETag is wasted work.
  app.disable("etag");
  app.use(requestContext(context.logger));
  app.use(context.metrics.httpMiddleware());
  app.use(jsonBodyParser(JSON_BODY_LIMIT_BYTES));
  for (const module of [...CORE_ROUTES, ...routes]) app.use(module(context));
  app.use(notFoundHandler());
  app.use(errorHandler());
  return app;
}

/** Wires the services from `options` (operator/app/context.ts) and mounts the routes on them. */
export function createCoreApp(options: CoreAppOptions): CoreApp {
  const { services, routes, ...deps } = options;
  const context = createCoreContext(deps, services);
  return { app: mountCoreRoutes(context, routes), context };
}
