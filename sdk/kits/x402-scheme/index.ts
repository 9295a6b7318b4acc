/**
 * Surety's x402 scheme `svc-credit` for the official x402 packages, one entry
 * point: the client for `@x402/fetch` / `@x402/axios` (and `x402Client`), the
 * server for `@x402/express` / `@x402/hono` (and `x402ResourceServer`). The
 * facilitator side is Surety's facilitator (`/verify`, `/settle`,
 * `/supported`), reached through `@x402/core`'s `HTTPFacilitatorClient`.
 * Only types are imported from `@x402/core`: nothing here loads it at run time.
 * docs/x402-integration.md describes the whole flow.
 */
export {
  type SchemeClock,
  type SuretyClientSchemeOptions,
  type SuretySpendControls,
  SuretyClientScheme,
  suretyClientSchemeFromCore,
} from "./client";
export {
  DEFAULT_ASSET_TRANSFER_METHOD,
  type MoneyAsset,
  PAYMENT_ALREADY_USED,
  PAYMENT_IN_PROGRESS,
  SETTLE_ATTEMPT_FROM_BUYER,
  SURETY_PAYMENT_FLOWS,
  type SuretyPriceInput,
  type SuretyServerSchemeOptions,
  SuretyServerScheme,
  certificateOfSettlement,
  ledgerStepAfterFailure,
  moneyToBaseUnits,
  settleAttemptOf,
  suretyPrice,
} from "./server";
export { type ClaimsInput, type PayerSigner, REQ_ID_BYTES, buildClaims, randomReqId } from "./claims";
export { domainFromPublicParams, domainNetwork } from "./domain";
export { type OptionRejection, PaymentError, type PaymentErrorCode, type RejectionReason } from "./errors";
export {
  type ParsedSpendingLimits,
  type SelectedOption,
  type SelectionRules,
  type SpendingLimits,
  parseSpendingLimits,
  rejectOption,
  selectPaymentOption,
} from "./select";
export { SCHEME, SETTLE_ATTEMPT_FIELD, type SettleAttempt, settlementAlreadyIssued } from "../../x402";
// The durable SQLite ledger is ./sqlite-ledger.ts (SqlitePaymentLedger), not re-exported here: it loads
// better-sqlite3, a native module, which the scheme itself does not need.
export {
  DEFAULT_RETENTION_SECONDS,
  DEFAULT_SETTLE_LEASE_SECONDS,
  type LedgerEntry,
  type LedgerEntryState,
  MemoryPaymentLedger,
  type PaymentLedger,
  type PaymentLedgerOptions,
  type ReservationResult,
  decideReservation,
  paymentKey,
} from "./ledger";
