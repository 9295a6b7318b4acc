export {
  AccessTokens,
  AccessTokenError,
  type AccessTokenConfig,
  type IssuedAccessToken,
} from "./access-token";
export {
  canIssueFor,
  DEFAULT_SCOPES,
  hasScope,
  isAdmin,
  isFacilitator,
  type Principal,
  SCOPE_ISSUE_GUARANTEES,
} from "./authority";
export { authenticate } from "./bearer";
export { AUTH_ERRORS, AuthError, type AuthErrorCode, BEARER_TOKEN_ERRORS } from "./errors";
export { AuthService, type AuthServiceDeps, type NonceResponse, type TokenResponse } from "./service";
export { SIWE_CLOCK_SKEW_SECONDS, siweTemplate, type SiweTemplate, verifySiweSignIn } from "./siwe";
