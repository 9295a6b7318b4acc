/**
 * What route modules are built from. `CoreDeps` are injected (tests swap
 * the clock, store, logger and config); `CoreServices` are built from them
 * once per app, or injected too. Later work (guarantee issuance, chain
 * indexer, public parameters) adds its services here and its route module
 * to `CORE_ROUTES` in app.ts.
 */
import type { Router } from "express";
import type { Clock } from "../clock";
import type { OperatorConfig } from "../config";
import type { Logger } from "../logger";
import type { Store } from "../store";
import { AccessTokens, AuthService } from "../auth";

export interface CoreDeps {
  config: OperatorConfig;
  store: Store;
  clock: Clock;
  logger: Logger;
}

export interface CoreServices {
  accessTokens: AccessTokens;
  auth: AuthService;
}

export type CoreContext = CoreDeps & CoreServices;

/** A route module: builds an Express router from the context; mounted at the root. */
export type RouteModule = (context: CoreContext) => Router;

export function createCoreContext(deps: CoreDeps, services: Partial<CoreServices> = {}): CoreContext {
  const accessTokens = services.accessTokens ?? new AccessTokens(deps.config, deps.clock);
  const auth = services.auth ?? new AuthService({ ...deps, accessTokens });
  return { ...deps, accessTokens, auth };
}
