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
  SURETY_PAYMENT_FLOWS,
  type SuretyPriceInput,
  type SuretyServerSchemeOptions,
  SuretyServerScheme,
  certificateOfSettlement,
  moneyToBaseUnits,
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
export { SCHEME } from "../../x402";
export {
  DEFAULT_RETENTION_SECONDS,
  MemoryPaymentLedger,
  type PaymentLedger,
  type ReservationResult,
  paymentKey,
} from "./ledger";
