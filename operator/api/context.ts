/**
 * What route modules are built from: the services wired in operator/app/context.ts, the store narrowed
 * to what each module uses. The HTTP layer builds no service of its own.
 */
import type { Router } from "express";
import type { CoreContext } from "../app/context";

export type { CoreContext };

/** The context with its store narrowed to `S` (e.g. `StoreAreas<"webhooks">`): what a route module reads. */
export type RouteContext<S = CoreContext["store"]> = Omit<CoreContext, "store"> & { store: S };

/**
 * A route module: builds an Express router from the context; mounted at the root. `S`: the part of the
 * store it uses (a module given `StoreAreas<"webhooks">` cannot reach the collateral).
 */
export type RouteModule<S = CoreContext["store"]> = (context: RouteContext<S>) => Router;
