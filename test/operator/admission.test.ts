import { expect } from "chai";
import { httpErrorOf } from "../../operator/api/errors";
import { IssuanceAdmission } from "../../operator/guarantees/admission";
import { IssuanceError } from "../../operator/guarantees/issuance";
import { silentLogger } from "../../operator/logger";

describe("issuance admission control (issue 26 item 1b)", () => {
  it("admits up to the in-flight bound, sheds one more, admits again once one ends", () => {
    const admission = new IssuanceAdmission({ maxInFlight: 2, maxLoopDelayMs: 0, logger: silentLogger() });
    const a = admission.admit();
    const b = admission.admit();
    expect(a.admitted && b.admitted).to.equal(true);
    const c = admission.admit();
    expect(c.admitted).to.equal(false);
    if (!c.admitted) expect(c.reason).to.match(/2 issuances already in progress/);
    if (a.admitted) a.release();
    if (a.admitted) a.release(); // twice: counted once
    expect(admission.inFlightNow()).to.equal(1);
    expect(admission.admit().admitted).to.equal(true);
    expect(admission.counts).to.deep.equal({ admitted: 3, shedInFlight: 1, shedDelay: 0 });
    admission.stop();
  });

  it("answers a shed issuance 500 issuance_overloaded with Retry-After (the spec's only 5xx here)", () => {
    const error = httpErrorOf(new IssuanceError("issuance_overloaded", "shed"));
    expect(error.status).to.equal(500);
    expect(error.code).to.equal("issuance_overloaded");
    expect(error.headers).to.deep.equal({ "Retry-After": "1" });
    expect(httpErrorOf(new IssuanceError("commit_deadline_at_risk", "late")).status).to.equal(500);
  });
});
