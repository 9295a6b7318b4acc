/**
 * The Surety protocol layer: every wire format in one place, as pure functions: no network, no files, no
 * HTTP framework, no clock (times are given), no node built-in beyond the crypto primitives. Operator,
 * facilitator, scripts and tests import from here. The kits that do I/O on top of it (the buyer and seller
 * scheme for the official x402 packages, the x402 v1 paywall, the webhook receiver) are in sdk/kits/.
 */
export * from "./errors";
export * from "./wire";
export * from "./claims";
export * from "./claim-checks";
export * from "./ids";
export * from "./eip712";
export * from "./signing-keys";
export * from "./certificate";
export * from "./public-params";
export * from "./bls";
export * from "./merkle";
export * from "./guarantee-tree";
export * from "./guarantee-states";
export * from "./x402";
export * from "./webhooks";
