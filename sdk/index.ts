/**
 * The Surety protocol layer: every wire format in one place, pure functions,
 * no I/O. Operator, facilitator, scripts and tests import from here.
 */
export * from "./errors";
export * from "./wire";
export * from "./claims";
export * from "./ids";
export * from "./eip712";
export * from "./certificate";
export * from "./public-params";
export * from "./bls";
export * from "./merkle";
export * from "./guarantee-tree";
export * from "./x402";
export * from "./webhooks";
