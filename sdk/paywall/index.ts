/** Seller paywall for x402 `svc-credit` payments: Express middleware and its pure parts. */
export * from "./routes";
export * from "./ledger";
export * from "./facilitator-client";
export * from "./middleware";
