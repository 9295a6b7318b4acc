import { expect } from "chai";
import { toErrorResponse } from "../../operator/api/error-handler";
import { AUTH_ERRORS, AuthError } from "../../operator/auth";
import { DomainError } from "../../operator/errors";
import { ISSUANCE_ERRORS, IssuanceError } from "../../operator/guarantees";
import { LIFECYCLE_ERRORS, LifecycleError } from "../../operator/lifecycle/v2-lifecycle";

/** api/errors.ts gives each domain refusal its status; the domains themselves know none. */
describe("Core: domain refusals to HTTP answers (one table)", function () {
  it("answers the same code by the domain that refused it", function () {
    // invalid_signature: a SIWE sign-in is 401, a guarantee's payer signature is 400.
    expect(toErrorResponse(new AuthError(AUTH_ERRORS.invalidSignature, "bad")).status).to.equal(401);
    expect(toErrorResponse(new IssuanceError(ISSUANCE_ERRORS.invalidSignature, "bad")).status).to.equal(400);
  });

  it("carries the RFC 6750 challenge on bearer-token refusals only", function () {
    const missing = toErrorResponse(new AuthError(AUTH_ERRORS.missingToken, "no token"));
    expect(missing.headers).to.deep.equal({ "WWW-Authenticate": 'Bearer realm="surety"' });
    const expired = toErrorResponse(new AuthError(AUTH_ERRORS.tokenExpired, "access token has expired"));
    expect(expired.headers["WWW-Authenticate"]).to.equal(
      'Bearer realm="surety", error="invalid_token", error_description="access token has expired"',
    );
    expect(toErrorResponse(new AuthError(AUTH_ERRORS.nonceUsed, "used")).headers).to.deep.equal({});
  });

  it("puts details next to error and code (a duplicate's stored certificate)", function () {
    const certificate = { claims: "0x01", signature: "0x02" };
    const answer = toErrorResponse(new IssuanceError(ISSUANCE_ERRORS.duplicate, "issued", { certificate }));
    expect(answer.status).to.equal(409);
    expect(answer.body).to.deep.equal({ certificate, error: "issued", code: "duplicate_guarantee" });
  });

  it("maps the lifecycle's and Core's unavailable refusals", function () {
    expect(toErrorResponse(new LifecycleError(LIFECYCLE_ERRORS.notPayer, "x")).status).to.equal(403);
    expect(toErrorResponse(new LifecycleError(LIFECYCLE_ERRORS.invalidState, "x")).status).to.equal(409);
    expect(toErrorResponse(new IssuanceError(ISSUANCE_ERRORS.indexerStale, "x")).status).to.equal(500);
  });

  it("answers a DomainError of no listed domain as an internal error, naming nothing", function () {
    expect(toErrorResponse(new DomainError("secret_internal_code", "internal detail")).body).to.deep.equal({
      error: "internal error",
      code: "internal_error",
    });
  });
});
