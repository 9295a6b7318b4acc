/**
 * Audit H-2: a passed V2 verdict is not final. `ValidationRegistry.validationResponse` overwrites the record
 * on every post, and the answer verifier and `remunerate` require the *latest* `lastUpdate <= deadline`, so a
 * repeat post after the deadline (or the registry's removal from the trusted set) turned a netted V2
 * guarantee into "not validated" for good. `Vault.pinVerdicts` records a passing verdict once the deadline
 * has passed; from then on the Vault and the ClearingHouse accept it without reading the registry.
 * The audit's attacks (test/audit/validator-reposts.test.ts on branch `audit`) are the regression tests here:
 * they fail once the verdict is pinned.
 */
import { loadFixture, time } from "@nomicfoundation/hardhat-network-helpers";
import { expect } from "chai";
import { id as hashText, parseEther } from "ethers";

import { guaranteeLeafOf } from "../../operator/clearing/commit-plan";
import { SIGNING_SCHEME_CODES } from "../../sdk/eip712";
import {
  ETH,
  commitPlanned,
  creditProofOf,
  disputeAnswerOf,
  remunerateArgs,
  signClaims,
  signedGuarantee,
  v2Certificate,
  validatedV2Fixture,
  validatedV2Guarantee,
} from "./helpers";
import { buildCycleOf, listedOf } from "./model/cycles";

const ONE = parseEther("1");
const UPHELD = 2n;
const REMOVED = 4n;

type Fixture = Awaited<ReturnType<typeof validatedV2Fixture>>;

/** Past the fixture's policy deadline (issuance + 3600 s). */
async function pastDeadline(f: Fixture) {
  const deadline = await deadlineOf(f);
  if (deadline !== 0n) await time.increaseTo(Number(deadline) + 1);
}

/** The fixture's policy deadline while it has not passed (the pin refuses and names it), else 0. */
async function deadlineOf(f: Fixture): Promise<bigint> {
  const err = await f.vault.pinVerdicts.staticCall([f.cert.claims]).then(
    () => null,
    (e: { data?: string }) => e,
  );
  if (err === null) return 0n;
  const decoded = f.vault.interface.parseError((err as { data: string }).data);
  return decoded!.args[1] as bigint;
}

describe("Pinned V2 verdicts (audit H-2)", () => {
  async function nettedFixture() {
    const f = await validatedV2Fixture(); // alice → bob 2 ETH, V2, score 90 ≥ 50 before the deadline
    await f.clearingHouse.connect(f.admin).postBond(ETH, 0, { value: 5n * ONE });
    await time.increase(3590); // Core nets it late in the validation window
    const g = validatedV2Guarantee(f);
    const { plan } = await commitPlanned(f, 1n, [g], [f.cert.guaranteeId]);
    return { ...f, g, plan };
  }

  describe("pinVerdicts", () => {
    it("refuses before and at the deadline: the validator may still answer", async () => {
      const f = await loadFixture(validatedV2Fixture);
      const deadline = await deadlineOf(f);
      await expect(f.vault.pinVerdicts([f.cert.claims]))
        .to.be.revertedWithCustomError(f.vault, "VerdictNotFinal")
        .withArgs(f.cert.guaranteeId, deadline);
      await time.setNextBlockTimestamp(deadline);
      await expect(f.vault.pinVerdicts([f.cert.claims])).to.be.revertedWithCustomError(
        f.vault,
        "VerdictNotFinal",
      );
    });

    it("pins a passing verdict once, by anyone, with VerdictPinned; a second pin is a no-op", async () => {
      const f = await loadFixture(validatedV2Fixture);
      await pastDeadline(f);
      expect(await f.vault.isVerdictPinned(f.cert.requestHash)).to.equal(false);
      expect(await f.vault.connect(f.outsider).pinVerdicts.staticCall([f.cert.claims])).to.equal(1n);
      await expect(f.vault.connect(f.outsider).pinVerdicts([f.cert.claims]))
        .to.emit(f.vault, "VerdictPinned")
        .withArgs(f.cert.guaranteeId, f.cert.requestHash, f.registryAddress, f.validator.address);
      expect(await f.vault.isVerdictPinned(f.cert.requestHash)).to.equal(true);
      expect(await f.vault.pinVerdicts.staticCall([f.cert.claims, f.cert.claims])).to.equal(0n);
      await expect(f.vault.pinVerdicts([f.cert.claims])).not.to.emit(f.vault, "VerdictPinned");
    });

    it("skips, without reverting the batch, a verdict that does not pass", async () => {
      const f = await loadFixture(validatedV2Fixture);
      const failed = v2Certificate({
        chainId: f.chainId,
        vault: f.vaultAddress,
        user: f.alice.address,
        recipient: f.bob.address,
        reqId: 78n,
        amount: ONE,
        asset: ETH,
        policy: {
          registry: f.registryAddress,
          validator: f.validator.address,
          agentId: 3n,
          minScore: 50,
          jobHash: hashText("job"),
          tag: "ok",
          deadline: await deadlineOf(f),
        },
      });
      await f.validationRegistry
        .connect(f.bob)
        .validationRequest(f.validator.address, 3n, "", failed.requestHash);
      await f.validationRegistry
        .connect(f.validator)
        .validationResponse(failed.requestHash, 10, "", hashText("e"), "ok");
      await pastDeadline(f);
      await expect(f.vault.pinVerdicts([failed.claims, f.cert.claims]))
        .to.emit(f.vault, "VerdictPinned")
        .withArgs(f.cert.guaranteeId, f.cert.requestHash, f.registryAddress, f.validator.address);
      expect(await f.vault.isVerdictPinned(failed.requestHash)).to.equal(false);
      // A failed verdict stays refused by remunerate with its reason.
      await expect(f.vault.remunerate(...remunerateArgs(failed))).to.be.revertedWithCustomError(
        f.vault,
        "ValidationScoreTooLow",
      );
    });

    it("refuses V1 claims and claims of another deployment", async () => {
      const f = await loadFixture(validatedV2Fixture);
      await pastDeadline(f);
      const v1 = await signedGuarantee(f, f.alice, f.bob.address, 5n, ONE);
      await expect(f.vault.pinVerdicts([v1.claims])).to.be.revertedWithCustomError(
        f.vault,
        "NotV2Certificate",
      );
      const elsewhere = v2Certificate({
        chainId: f.chainId,
        vault: f.clearingHouseAddress,
        user: f.alice.address,
        recipient: f.bob.address,
        reqId: 77n,
        amount: ONE,
        asset: ETH,
        policy: {
          registry: f.registryAddress,
          validator: f.validator.address,
          agentId: 3n,
          minScore: 50,
          jobHash: hashText("job"),
          tag: "ok",
          deadline: 1n,
        },
      });
      await expect(f.vault.pinVerdicts([elsewhere.claims])).to.be.revertedWithCustomError(
        f.vault,
        "CertificateDomainMismatch",
      );
    });

    it("binds the policy: a pin of another policy under the same id does not pass this guarantee", async () => {
      const f = await loadFixture(validatedV2Fixture);
      // mallory's own validator passes a policy she made up for alice's guarantee id (claims without any
      // signature are enough to pin); the pin is keyed by the request hash, which commits to the policy.
      const forged = v2Certificate({
        chainId: f.chainId,
        vault: f.vaultAddress,
        user: f.alice.address,
        recipient: f.bob.address,
        reqId: 77n,
        amount: 2n * ONE,
        asset: ETH,
        policy: {
          registry: f.registryAddress,
          validator: f.outsider.address,
          agentId: 3n,
          minScore: 0,
          jobHash: hashText("job"),
          tag: "ok",
          deadline: await deadlineOf(f),
        },
      });
      expect(forged.guaranteeId).to.equal(f.cert.guaranteeId);
      await f.validationRegistry
        .connect(f.outsider)
        .validationRequest(f.outsider.address, 3n, "", forged.requestHash);
      await f.validationRegistry
        .connect(f.outsider)
        .validationResponse(forged.requestHash, 0, "", hashText("e"), "ok");
      await pastDeadline(f);
      await f.vault.pinVerdicts([forged.claims]);
      expect(await f.vault.isVerdictPinned(forged.requestHash)).to.equal(true);
      expect(await f.vault.isVerdictPinned(f.cert.requestHash)).to.equal(false);
      // alice's real guarantee is still pinned on its own verdict.
      await expect(f.vault.pinVerdicts([f.cert.claims])).to.emit(f.vault, "VerdictPinned");
    });
  });

  describe("regression: the audit's attacks fail after a pin", () => {
    it("a re-post of the verdict after the deadline: the honest answer is Upheld, bob is paid", async () => {
      const f = await loadFixture(nettedFixture);
      const ch = f.clearingHouse;
      await ch.connect(f.alice).disputeGuarantee(1, ETH, 0);
      await time.increase(15); // past the deadline
      await f.vault.pinVerdicts([f.cert.claims]); // Core pins what it netted
      await f.validationRegistry
        .connect(f.validator)
        .validationResponse(f.cert.requestHash, 90, "", hashText("e"), "ok");
      await expect(ch.answerDispute(1, ETH, f.alice.address, 0, disputeAnswerOf([f.g], f.alice.address, 0)))
        .to.emit(ch, "DisputeResolved")
        .withArgs(1n, ETH, f.alice.address, 0n, UPHELD, f.cert.guaranteeId, 2n * ONE);
      expect(await ch.deductedOf(1, ETH, f.bob.address)).to.equal(0n);
      const bob = creditProofOf(f.plan, f.bob.address);
      const w = await f.vault.timings();
      await ch.connect(f.alice).payNetDebit(1, ETH, { value: 2n * ONE });
      await time.increase(Number(w.challengeWindow) * 2 + 1);
      await expect(ch.claimNetCredit(1, ETH, f.bob.address, bob.summary, bob.proof))
        .to.emit(ch, "NetCreditClaimed")
        .withArgs(1n, ETH, f.bob.address, 2n * ONE);
    });

    it("a failing re-post (score 0) after the deadline does not unpin either", async () => {
      const f = await loadFixture(nettedFixture);
      const ch = f.clearingHouse;
      await ch.connect(f.alice).disputeGuarantee(1, ETH, 0);
      await time.increase(15);
      await f.vault.pinVerdicts([f.cert.claims]);
      await f.validationRegistry
        .connect(f.validator)
        .validationResponse(f.cert.requestHash, 0, "", hashText("e2"), "no");
      await expect(ch.answerDispute(1, ETH, f.alice.address, 0, disputeAnswerOf([f.g], f.alice.address, 0)))
        .to.emit(ch, "DisputeResolved")
        .withArgs(1n, ETH, f.alice.address, 0n, UPHELD, f.cert.guaranteeId, 2n * ONE);
    });

    it("untrusting the registry after the pin: the answer is Upheld", async () => {
      const f = await loadFixture(nettedFixture);
      const ch = f.clearingHouse;
      await ch.connect(f.alice).disputeGuarantee(1, ETH, 0);
      await time.increase(15);
      await f.vault.pinVerdicts([f.cert.claims]);
      await f.vault.connect(f.admin).setTrustedRegistry(f.registryAddress, false);
      await expect(ch.answerDispute(1, ETH, f.alice.address, 0, disputeAnswerOf([f.g], f.alice.address, 0)))
        .to.emit(ch, "DisputeResolved")
        .withArgs(1n, ETH, f.alice.address, 0n, UPHELD, f.cert.guaranteeId, 2n * ONE);
    });

    it("remunerate pays a pinned verdict after a re-post and after the registry is untrusted", async () => {
      const f = await loadFixture(validatedV2Fixture);
      await pastDeadline(f);
      await f.vault.connect(f.bob).pinVerdicts([f.cert.claims]); // the seller pins its own
      await f.validationRegistry
        .connect(f.validator)
        .validationResponse(f.cert.requestHash, 90, "", hashText("e"), "ok");
      await f.vault.connect(f.admin).setTrustedRegistry(f.registryAddress, false);
      await expect(f.vault.connect(f.bob).remunerate(...remunerateArgs(f.cert)))
        .to.emit(f.vault, "GuaranteeRemunerated")
        .withArgs(f.cert.guaranteeId, f.alice.address, f.bob.address, ETH, 2n * ONE);
    });

    it("the recipient's credit dispute accepts a pinned verdict of an untrusted registry", async () => {
      const f = await loadFixture(validatedV2Fixture);
      await f.clearingHouse.connect(f.admin).postBond(ETH, 0, { value: 5n * ONE });
      const g = validatedV2Guarantee(f);
      const leaf = guaranteeLeafOf(g.payable);
      // A cycle crediting bob's guarantee to someone else: bob's credit dispute needs a validated guarantee.
      const cycle = buildCycleOf(1n, [leaf], () => f.outsider.address);
      await time.increase(3590); // committed late in the validation window: disputable past the deadline
      await f.clearingHouse
        .connect(f.operator)
        .commitCycle(
          cycle.cycleId,
          { root: cycle.root, guaranteesRoot: cycle.guaranteesRoot, debitsRoot: cycle.debitsRoot },
          cycle.totals,
          cycle.debtors,
          [],
        );
      const listed = listedOf(cycle, leaf, {
        claims: g.claims,
        certificate: signClaims(g.claims),
        scheme: SIGNING_SCHEME_CODES[g.scheme],
        signature: g.signature,
      });
      await pastDeadline(f);
      await f.vault.pinVerdicts([f.cert.claims]);
      await f.vault.connect(f.admin).setTrustedRegistry(f.registryAddress, false);
      await expect(f.clearingHouse.connect(f.bob).disputeCredit(1, ETH, f.alice.address, listed)).to.emit(
        f.clearingHouse,
        "CreditDisputed",
      );
    });
  });

  describe("unpinned verdicts keep today's rule (the window between the deadline and the pin)", () => {
    it("a re-post after the deadline before any pin voids the verdict: it can no longer be pinned", async () => {
      const f = await loadFixture(nettedFixture);
      const ch = f.clearingHouse;
      await ch.connect(f.alice).disputeGuarantee(1, ETH, 0);
      await time.increase(15);
      await f.validationRegistry
        .connect(f.validator)
        .validationResponse(f.cert.requestHash, 90, "", hashText("e"), "ok");
      expect(await f.vault.pinVerdicts.staticCall([f.cert.claims])).to.equal(0n);
      // A removal for "not validated" is the operator's call (audit H-1): Core's keeper answers it.
      const operator = ch.connect(f.operator);
      await expect(
        operator.answerDispute(1, ETH, f.alice.address, 0, disputeAnswerOf([f.g], f.alice.address, 0)),
      )
        .to.emit(ch, "DisputeResolved")
        .withArgs(1n, ETH, f.alice.address, 0n, REMOVED, f.cert.guaranteeId, 2n * ONE);
    });
  });
});
