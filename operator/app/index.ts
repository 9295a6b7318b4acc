/**
 * Core's composition root: its services wired in one place (context.ts), a process opened from its
 * configuration with its share of the work (open.ts, work.ts), and the background-only process
 * (background-process.ts). Nothing here knows HTTP: operator/api/ mounts routes on the context, and
 * operator/server.ts serves them.
 */
export { type CoreBackground, startCoreBackground } from "./background-process";
export { type CoreContext, type CoreDeps, type CoreServices, createCoreContext } from "./context";
export { type CoreProcessDeps, type CoreProcessRole, type OpenCore, openCore } from "./open";
export { type CoreWork, type CoreWorkOptions, startCoreWork } from "./work";
