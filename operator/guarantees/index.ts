export {
  GuaranteeIssuer,
  type GuaranteeIssuerDeps,
  ISSUANCE_ERRORS,
  IssuanceError,
  type IssuanceErrorCode,
} from "./issuance";
export { IssueBatcher, MAX_ISSUE_BATCH } from "./batcher";
export { availableCollateral, collateralCapacity, freeCollateral, lockLimit, reserveHold } from "./capacity";
export {
  balancesView,
  type BalanceView,
  claimsOfRecord,
  guaranteeView,
  type GuaranteeView,
  withCurrentCertificate,
} from "./view";
export { guaranteeTimeline, type TimelineEntry } from "./timeline";
