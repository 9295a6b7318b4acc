export { createCoreApp, CORE_ROUTES, JSON_BODY_LIMIT_BYTES, type CoreApp, type CoreAppOptions } from "./app";
export { HEALTH_PROBE_TIMEOUT_MS, publicRoutes } from "./public-routes";
export {
  createCoreContext,
  operatorBlsSigner,
  type CoreContext,
  type CoreDeps,
  type CoreServices,
  type RouteModule,
} from "./context";
export { errorHandler, notFoundHandler, toErrorResponse } from "./error-handler";
export * from "./errors";
export { REQUEST_ID_HEADER, requestContext } from "./request-context";
