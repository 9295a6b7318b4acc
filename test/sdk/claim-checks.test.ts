import { expect } from "chai";
import {
  CLAIM_CHECK_REASONS,
  type ClaimRules,
  type ClaimTimes,
  checkClaimRules,
  checkClaimTimes,
  checkPolicyIntegrity,
} from "../../sdk/claim-checks";
import type { GuaranteeClaimsV1, GuaranteeClaimsV2 } from "../../sdk/claims";
import { guaranteeId, validationRequestHash } from "../../sdk/ids";

const REGISTRY = "0x5FbDB2315678afecb367f032d93F642f64180aa3";
const RULES: ClaimRules = {
  chainId: 31337,
  vault: "0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512",
  acceptedVersions: [1, 2],
  trustedRegistries: [REGISTRY],
};
const NOW = 1_800_000_000;
const TIMES: ClaimTimes = { now: NOW, pastSeconds: 600, futureSeconds: 30, clockName: "the test's time" };

const v1: GuaranteeClaimsV1 = {
  version: 1,
  user: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
  recipient: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",
  reqId: 7n,
  amount: 1000n,
  asset: "0x0000000000000000000000000000000000000000",
  timestamp: NOW,
};
const v2: GuaranteeClaimsV2 = {
  ...v1,
  version: 2,
  policy: {
    registry: REGISTRY,
    validator: "0x90F79bf6EB2c4f870365E785982E1f101E93b906",
    agentId: 1n,
    minScore: 80,
    jobHash: "0x" + "11".repeat(32),
    tag: "quality",
    deadline: NOW + 3600,
  },
};

describe("sdk claim checks (Core's issuance and the facilitator's /verify)", function () {
  it("passes claims that meet every rule", function () {
    expect(checkClaimRules(v1, RULES)).to.equal(null);
    expect(checkClaimRules(v2, RULES)).to.equal(null);
    expect(checkClaimTimes(v1, TIMES)).to.equal(null);
    expect(checkClaimTimes(v2, TIMES)).to.equal(null);
  });

  it("refuses a version the deployment does not accept, naming the accepted ones", function () {
    const problem = checkClaimRules(v2, { ...RULES, acceptedVersions: [1] });
    expect(problem?.reason).to.equal(CLAIM_CHECK_REASONS.unsupportedVersion);
    expect(problem?.message).to.equal("claims.version: 2 is not accepted (accepted: 1)");
  });

  it("refuses an untrusted registry (any letter case of a trusted one passes)", function () {
    const other = { ...v2, policy: { ...v2.policy, registry: "0x" + "ab".repeat(20) } };
    expect(checkClaimRules(other, RULES)?.reason).to.equal("untrusted_validation_registry");
    const lower = { ...v2, policy: { ...v2.policy, registry: REGISTRY.toLowerCase() } };
    expect(checkClaimRules(lower, RULES)).to.equal(null);
  });

  it("checks the optional chain id and request hash against the claims", function () {
    const wrongChain = { ...v2, policy: { ...v2.policy, chainId: 1 } };
    expect(checkClaimRules(wrongChain, RULES)?.reason).to.equal("validation_chain_id_mismatch");
    const id = guaranteeId(RULES, v2.user, v2.reqId);
    const hash = validationRequestHash(RULES.chainId, v2.policy, id).toLowerCase();
    const right = { ...v2, policy: { ...v2.policy, chainId: 31337, requestHash: hash } };
    expect(checkClaimRules(right, RULES)).to.equal(null);
    const wrongHash = { ...v2, policy: { ...v2.policy, requestHash: "0x" + "22".repeat(32) } };
    const problem = checkClaimRules(wrongHash, RULES);
    expect(problem?.reason).to.equal("validation_request_hash_mismatch");
    expect(problem?.message).to.include(hash);
    // The same rule for a policy a seller asked for, named by its own field.
    const extra = checkPolicyIntegrity(
      { requestHash: "0x" + "22".repeat(32) },
      "paymentRequirements.extra",
      v2,
      RULES,
    );
    expect(extra?.message).to.match(/^paymentRequirements\.extra\.validation_request_hash: /);
  });

  it("holds the timestamp window at its bounds", function () {
    expect(checkClaimTimes({ ...v1, timestamp: NOW - 600 }, TIMES)).to.equal(null);
    expect(checkClaimTimes({ ...v1, timestamp: NOW - 601 }, TIMES)?.reason).to.equal("timestamp_too_old");
    expect(checkClaimTimes({ ...v1, timestamp: NOW + 30 }, TIMES)).to.equal(null);
    expect(checkClaimTimes({ ...v1, timestamp: NOW + 31 }, TIMES)?.reason).to.equal("timestamp_in_future");
  });

  it("judges the V2 deadline at its own time when given (Core: chain time), else at now", function () {
    const atNow = { ...v2, policy: { ...v2.policy, deadline: NOW } };
    expect(checkClaimTimes(atNow, TIMES)?.reason).to.equal("validation_deadline_passed");
    const later = { ...v2, policy: { ...v2.policy, deadline: NOW + 10 } };
    expect(checkClaimTimes(later, TIMES)).to.equal(null);
    const chainAhead = { ...TIMES, deadlineNow: () => NOW + 10, deadlineClockName: "chain time" };
    const problem = checkClaimTimes(later, chainAhead);
    expect(problem?.reason).to.equal("validation_deadline_passed");
    expect(problem?.message).to.include("chain time");
    // Not asked for V1 claims (Core's chain time may not exist yet).
    expect(checkClaimTimes(v1, { ...TIMES, deadlineNow: () => expect.fail("asked") })).to.equal(null);
  });
});
