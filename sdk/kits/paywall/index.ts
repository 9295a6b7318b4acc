/** Seller paywall for x402 `svc-credit` payments: Express middleware and its pure parts. */
export * from "./routes";
export * from "../x402-scheme/ledger";
export * from "./facilitator-client";
export * from "./middleware";
