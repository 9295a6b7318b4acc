export {
  createCoreApp,
  CORE_ROUTES,
  JSON_BODY_LIMIT_BYTES,
  mountCoreRoutes,
  type CoreApp,
  type CoreAppOptions,
} from "./app";
export { HEALTH_PROBE_TIMEOUT_MS, publicRoutes } from "./public-routes";
export { type CoreContext, type RouteModule } from "./context";
export { errorHandler, notFoundHandler, toErrorResponse } from "./error-handler";
export * from "./errors";
export { REQUEST_ID_HEADER, requestContext } from "./request-context";
