/**
 * Buyer client for x402 `svc-credit` payments. Pure parts (reading a 402,
 * choosing an option under spending limits, building claims and payloads)
 * are separate from the fetch wrapper that does the I/O.
 */
export * from "./errors";
export * from "./domain";
export * from "./required";
export * from "./select";
export * from "./payment";
export * from "./fetch";
