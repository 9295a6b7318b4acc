/**
 * What route modules are built from: the services wired in operator/app/context.ts, handed over
 * whole. The HTTP layer builds no service of its own.
 */
import type { Router } from "express";
import type { CoreContext } from "../app/context";

export type { CoreContext };

/** A route module: builds an Express router from the context; mounted at the root. */
export type RouteModule = (context: CoreContext) => Router;
