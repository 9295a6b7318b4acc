/**
 * Adversarial tests from the security review (docs/contracts.md, "Security review"): each one is an
 * attack or an edge an auditor would try against the contracts that hold money. Where the review found
 * a defect, the test was written first and failed before the fix.
 */
import { loadFixture, time } from "@nomicfoundation/hardhat-network-helpers";
import { expect } from "chai";
import { ethers } from "hardhat";
import { id as hashText, parseEther } from "ethers";

import { deploySurety } from "../../scripts/deploy";
import {
  ETH,
  GUARANTEES_ROOT,
  OPERATOR_BLS,
  OTHER_BLS,
  PAYMENT_DELAY,
  type PolicyFields,
  TIMINGS,
  buildCycle,
  remunerateArgs,
  rotateOperatorKey,
  suretyFixture,
  transfer,
  v2Certificate,
} from "./helpers";
import { publicKeyToEip2537 } from "../../sdk/bls";

const ONE = parseEther("1");
const USD = 1_000_000n;
const AGENT = 7n;
const TAG = "delivery";
const DAY = 86_400;

type Fixture = Awaited<ReturnType<typeof suretyFixture>>;

async function v2Setup(f: Fixture, reqId = 1n, amount = 2n * ONE, deadlineIn = DAY) {
  const policy: PolicyFields = {
    registry: f.registryAddress,
    validator: f.validator.address,
    agentId: AGENT,
    minScore: 70,
    jobHash: hashText("job"),
    tag: TAG,
    deadline: BigInt((await time.latest()) + deadlineIn),
  };
  const cert = v2Certificate({
    chainId: f.chainId,
    vault: f.vaultAddress,
    user: f.alice.address,
    recipient: f.bob.address,
    reqId,
    amount,
    asset: ETH,
    policy,
  });
  const request = () =>
    f.validationRegistry
      .connect(f.bob)
      .validationRequest(f.validator.address, AGENT, "ipfs://job", cert.requestHash);
  const answer = (score: number) =>
    f.validationRegistry
      .connect(f.validator)
      .validationResponse(cert.requestHash, score, "ipfs://r", hashText("e"), TAG);
  return { policy, cert, request, answer };
}

describe("Security review", () => {
  describe("fee-charging tokens cannot make the ClearingHouse over-credit a cycle", () => {
    async function feeDefaultFixture() {
      const f = await suretyFixture();
      const fee = await f.feeToken.getAddress(); // burns 1% of every transfer
      await f.vault.setTokenAllowed(fee, true);
      await f.vault.connect(f.alice).depositToken(fee, 20_000n); // 19_800 credited
      const cycle = buildCycle(1, transfer(fee, f.alice.address, f.bob.address, 10_000n));
      await f.clearingHouse.connect(f.operator).commitCycle(
        1,
        {
          root: cycle.root,
          guaranteesRoot: GUARANTEES_ROOT,
          debitsRoot: cycle.debitsRoot,
        },
        cycle.totals,
        cycle.debtors,
        [],
      );
      await time.increase(PAYMENT_DELAY + 1);
      return { ...f, fee, cycle };
    }

    it("default coverage funds what actually arrived and records the rest as shortfall", async () => {
      const { clearingHouse, vault, feeToken, fee, alice, bob, outsider, cycle, clearingHouseAddress } =
        await loadFixture(feeDefaultFixture);
      const tx = clearingHouse.connect(outsider).coverDefault(1, fee, alice.address);
      // The Vault moved 10_000 out of alice's balance; the ClearingHouse received 9_900.
      await expect(tx).to.emit(vault, "DefaultCovered").withArgs(alice.address, fee, 10_000n, 10_000n);
      await expect(tx)
        .to.emit(clearingHouse, "DefaultCovered")
        .withArgs(1n, fee, alice.address, 10_000n, 9_900n);
      const asset = await clearingHouse.getCycleAsset(1, fee);
      expect(asset.funded).to.equal(9_900n);
      expect(asset.shortfall).to.equal(100n);
      expect(await clearingHouse.heldLiquidity(fee)).to.equal(await feeToken.balanceOf(clearingHouseAddress));
      // The creditor is told how much is really there instead of hitting an ERC-20 balance revert.
      await expect(clearingHouse.claimNetCredit(1, fee, bob.address, ...cycle.claimOf(fee, bob.address)))
        .to.be.revertedWithCustomError(clearingHouse, "CreditNotYetFunded")
        .withArgs(1n, fee, 9_900n, 10_000n);
    });

    it("an ETH default still funds exactly what the Vault moved", async () => {
      const f = await loadFixture(suretyFixture);
      await f.vault.connect(f.alice).deposit({ value: ONE });
      const c = buildCycle(1, transfer(ETH, f.alice.address, f.bob.address, 2n * ONE));
      await f.clearingHouse.connect(f.operator).commitCycle(
        1,
        {
          root: c.root,
          guaranteesRoot: GUARANTEES_ROOT,
          debitsRoot: c.debitsRoot,
        },
        c.totals,
        c.debtors,
        [],
      );
      await time.increase(PAYMENT_DELAY + 1);
      await expect(f.clearingHouse.coverDefault(1, ETH, f.alice.address))
        .to.emit(f.clearingHouse, "DefaultCovered")
        .withArgs(1n, ETH, f.alice.address, 2n * ONE, ONE);
      const asset = await f.clearingHouse.getCycleAsset(1, ETH);
      expect([asset.funded, asset.shortfall]).to.deep.equal([ONE, ONE]);
      expect(await ethers.provider.getBalance(f.clearingHouseAddress)).to.equal(
        await f.clearingHouse.heldLiquidity(ETH),
      );
    });
  });

  describe("timing changes protect withdrawals already requested (invariant 3 after a setter)", () => {
    // Cycles become ten times longer: a guarantee accepted now may be committed much later.
    const longer = {
      ...TIMINGS,
      cycleLength: TIMINGS.cycleLength * 10,
      withdrawalGracePeriod: TIMINGS.withdrawalGracePeriod * 10,
    };
    const shorterPath = {
      ...TIMINGS,
      cycleLength: 1,
      withdrawalGracePeriod: TIMINGS.withdrawalGracePeriod - 50,
    };

    /**
     * Alice asks to withdraw all her collateral while a timing change is scheduled (setTimings is
     * timelocked after setup), ten seconds before it is due; then the change executes.
     */
    async function changedAfterRequest(timings: typeof TIMINGS) {
      const f = await suretyFixture();
      await f.vault.connect(f.alice).deposit({ value: 10n * ONE });
      await f.vault.setTimings(timings);
      await time.increase((await f.vault.timelockDelay()) - 10n);
      await f.vault.connect(f.alice).requestWithdrawal(ETH, 10n * ONE);
      const requestedAt = BigInt(await time.latest());
      const { id, finalizableAt } = await f.vault.pendingWithdrawal(f.alice.address, ETH);
      await time.increase(10);
      await expect(f.vault.setTimings(timings)).to.emit(f.vault, "TimingsUpdated");
      return { ...f, requestedAt, id, finalizableAt };
    }
    const lengthenedFixture = () => changedAfterRequest(longer);
    const shortenedFixture = () => changedAfterRequest(shorterPath);

    it("a lengthened clearing path delays an open request to request time + the new grace period", async () => {
      const { vault, clearingHouse, operator, alice, bob, requestedAt, id, finalizableAt } =
        await loadFixture(lengthenedFixture);
      expect(finalizableAt).to.equal(requestedAt + BigInt(TIMINGS.withdrawalGracePeriod));
      const newReadyAt = requestedAt + BigInt(longer.withdrawalGracePeriod);
      expect(await vault.withdrawalFinalizableAt(alice.address, ETH)).to.equal(newReadyAt);

      await time.increaseTo(finalizableAt);
      await expect(vault.connect(alice).finalizeWithdrawal(ETH))
        .to.be.revertedWithCustomError(vault, "WithdrawalNotReady")
        .withArgs(id, newReadyAt);
      // The cycle holding alice's guarantee commits within the new path: the withdrawal cannot take it.
      const c = buildCycle(1, transfer(ETH, alice.address, bob.address, 4n * ONE));
      await clearingHouse.connect(operator).commitCycle(
        1,
        {
          root: c.root,
          guaranteesRoot: GUARANTEES_ROOT,
          debitsRoot: c.debitsRoot,
        },
        c.totals,
        c.debtors,
        [],
      );
      await time.increaseTo(newReadyAt);
      await expect(vault.connect(alice).finalizeWithdrawal(ETH))
        .to.emit(vault, "WithdrawalFinalized")
        .withArgs(id, alice.address, ETH, 10n * ONE, 6n * ONE);
    });

    it("a shortened grace period never speeds an open request up", async () => {
      const { vault, alice, finalizableAt, id } = await loadFixture(shortenedFixture);
      expect(await vault.withdrawalFinalizableAt(alice.address, ETH)).to.equal(finalizableAt);
      await time.setNextBlockTimestamp(finalizableAt - 1n);
      await expect(vault.connect(alice).finalizeWithdrawal(ETH))
        .to.be.revertedWithCustomError(vault, "WithdrawalNotReady")
        .withArgs(id, finalizableAt);
      await expect(vault.connect(alice).finalizeWithdrawal(ETH)).to.emit(vault, "WithdrawalFinalized");
    });

    it("withdrawalFinalizableAt is zero without an open request", async () => {
      const { vault, bob } = await loadFixture(shortenedFixture);
      expect(await vault.withdrawalFinalizableAt(bob.address, ETH)).to.equal(0n);
    });
  });

  describe("Merkle claims cannot be redirected", () => {
    async function claimFixture() {
      const f = await suretyFixture();
      await f.vault.connect(f.alice).deposit({ value: 10n * ONE });
      await f.vault.connect(f.alice).depositToken(f.usdAddress, 100n * USD);
      // Same shape in two cycles and two assets: bob +1 ETH / +1 tUSD, carol +2 ETH; alice owes all.
      const positions = (id: number) =>
        buildCycle(id, [
          { asset: ETH, participant: f.alice.address, debit: 3n * ONE, credit: 0n },
          { asset: ETH, participant: f.bob.address, debit: 0n, credit: ONE },
          { asset: ETH, participant: f.carol.address, debit: 0n, credit: 2n * ONE },
          { asset: f.usdAddress, participant: f.alice.address, debit: ONE, credit: 0n },
          { asset: f.usdAddress, participant: f.bob.address, debit: 0n, credit: ONE },
        ]);
      const c1 = positions(1);
      const c2 = positions(2);
      for (const c of [c1, c2]) {
        await f.clearingHouse.connect(f.operator).commitCycle(
          c.id,
          {
            root: c.root,
            guaranteesRoot: GUARANTEES_ROOT,
            debitsRoot: c.debitsRoot,
          },
          c.totals,
          c.debtors,
          [],
        );
      }
      await f.clearingHouse.connect(f.alice).payNetDebit(1, ETH, { value: 3n * ONE });
      await time.increase(TIMINGS.challengeWindow + 1); // claims open after the challenge window
      return { ...f, c1, c2 };
    }

    it("refuses another participant, another cycle, another asset, a debtor's leaf and a second claim", async () => {
      const { clearingHouse, alice, bob, carol, usdAddress, c1, c2 } = await loadFixture(claimFixture);
      const [bobSummary, bobProof] = c1.claimOf(ETH, bob.address);
      const attempts: Array<[string, () => Promise<unknown>]> = [
        [
          "carol with bob's proof",
          () => clearingHouse.claimNetCredit(1, ETH, carol.address, bobSummary, bobProof),
        ],
        [
          "bob with carol's amount",
          () =>
            clearingHouse.claimNetCredit(1, ETH, bob.address, { ...bobSummary, inTotal: 2n * ONE }, bobProof),
        ],
        [
          "cycle 1 with a cycle 2 proof",
          () => clearingHouse.claimNetCredit(1, ETH, bob.address, ...c2.claimOf(ETH, bob.address)),
        ],
        [
          "ETH with the tUSD proof",
          () => clearingHouse.claimNetCredit(1, ETH, bob.address, ...c1.claimOf(usdAddress, bob.address)),
        ],
        [
          "an inner node as the leaf (empty proof)",
          () => clearingHouse.claimNetCredit(1, ETH, bob.address, bobSummary, []),
        ],
      ];
      for (const [what, attempt] of attempts) {
        await expect(attempt(), what).to.be.revertedWithCustomError(clearingHouse, "InvalidMerkleProof");
      }
      // The debtor's own summary nets to a debit: no credit.
      await expect(
        clearingHouse.claimNetCredit(1, ETH, alice.address, ...c1.claimOf(ETH, alice.address)),
      ).to.be.revertedWithCustomError(clearingHouse, "ZeroCredit");
      await clearingHouse.claimNetCredit(1, ETH, bob.address, bobSummary, bobProof);
      await expect(clearingHouse.claimNetCredit(1, ETH, bob.address, bobSummary, bobProof))
        .to.be.revertedWithCustomError(clearingHouse, "CreditAlreadyClaimed")
        .withArgs(1n, ETH, bob.address);
      // Cycle 2 is separate liquidity: bob's valid cycle-2 leaf is not funded by cycle 1's payment.
      await expect(clearingHouse.claimNetCredit(2, ETH, bob.address, ...c2.claimOf(ETH, bob.address)))
        .to.be.revertedWithCustomError(clearingHouse, "CreditNotYetFunded")
        .withArgs(2n, ETH, 0n, ONE);
    });
  });

  describe("debts end exactly once", () => {
    it("a debtor that paid cannot be covered, a covered debtor cannot pay, and both release the obligation", async () => {
      const f = await loadFixture(suretyFixture);
      const { vault, clearingHouse, operator, alice, carol, bob } = f;
      await vault.connect(alice).deposit({ value: 5n * ONE });
      await vault.connect(carol).deposit({ value: 5n * ONE });
      const c = buildCycle(1, [
        { asset: ETH, participant: alice.address, debit: ONE, credit: 0n },
        { asset: ETH, participant: carol.address, debit: ONE, credit: 0n },
        { asset: ETH, participant: bob.address, debit: 0n, credit: 2n * ONE },
      ]);
      await clearingHouse.connect(operator).commitCycle(
        1,
        {
          root: c.root,
          guaranteesRoot: GUARANTEES_ROOT,
          debitsRoot: c.debitsRoot,
        },
        c.totals,
        c.debtors,
        [],
      );
      await clearingHouse.connect(alice).payNetDebit(1, ETH, { value: ONE });
      await time.increase(PAYMENT_DELAY + 1);
      await expect(clearingHouse.coverDefault(1, ETH, alice.address))
        .to.be.revertedWithCustomError(clearingHouse, "DebtAlreadyResolved")
        .withArgs(1n, ETH, alice.address, 2n);
      await clearingHouse.coverDefault(1, ETH, carol.address);
      await expect(clearingHouse.connect(carol).payNetDebit(1, ETH, { value: ONE }))
        .to.be.revertedWithCustomError(clearingHouse, "DebtAlreadyResolved")
        .withArgs(1n, ETH, carol.address, 3n);
      expect(await vault.obligationOf(alice.address, ETH)).to.equal(0n);
      expect(await vault.obligationOf(carol.address, ETH)).to.equal(0n);
      expect(await vault.balanceOf(alice.address, ETH)).to.equal(5n * ONE);
      expect(await vault.balanceOf(carol.address, ETH)).to.equal(4n * ONE);
      expect((await clearingHouse.getCycle(1)).finalized).to.equal(true);
    });
  });

  describe("remuneration", () => {
    it("cannot take collateral reserved by a committed, unpaid debit (invariant 2 for remunerate)", async () => {
      const f = await loadFixture(suretyFixture);
      await f.vault.connect(f.alice).deposit({ value: 3n * ONE });
      const v2 = await v2Setup(f);
      await v2.request();
      await v2.answer(90);
      const c = buildCycle(1, transfer(ETH, f.alice.address, f.carol.address, 2n * ONE));
      await f.clearingHouse.connect(f.operator).commitCycle(
        1,
        {
          root: c.root,
          guaranteesRoot: GUARANTEES_ROOT,
          debitsRoot: c.debitsRoot,
        },
        c.totals,
        c.debtors,
        [],
      );
      await expect(f.vault.remunerate(...remunerateArgs(v2.cert)))
        .to.be.revertedWithCustomError(f.vault, "InsufficientFreeCollateral")
        .withArgs(f.alice.address, ETH, ONE, 2n * ONE);
    });

    it("a certificate cannot be replayed in another Vault that trusts the same operator key", async () => {
      const f = await loadFixture(suretyFixture);
      const other = await deploySurety(f.admin, { operatorBlsPublicKey: OPERATOR_BLS.publicKey });
      await other.vault.connect(f.alice).deposit({ value: 5n * ONE });
      await f.vault.connect(f.alice).deposit({ value: 5n * ONE });
      const v2 = await v2Setup(f);
      await v2.request();
      await v2.answer(90);
      await f.vault.remunerate(...remunerateArgs(v2.cert));
      await expect(other.vault.remunerate(...remunerateArgs(v2.cert))).to.be.revertedWithCustomError(
        other.vault,
        "CertificateDomainMismatch",
      );
    });

    it("after a key rotation old certificates fail; rotating back cannot pay a consumed one twice", async () => {
      const f = await loadFixture(suretyFixture);
      await f.vault.connect(f.alice).deposit({ value: 5n * ONE });
      const v2 = await v2Setup(f);
      await v2.request();
      await v2.answer(90);
      await f.vault.remunerate(...remunerateArgs(v2.cert));
      await rotateOperatorKey(f.vault, publicKeyToEip2537(OTHER_BLS.publicKey));
      await expect(f.vault.remunerate(...remunerateArgs(v2.cert))).to.be.revertedWithCustomError(
        f.vault,
        "InvalidCertificateSignature",
      );
      await rotateOperatorKey(f.vault, publicKeyToEip2537(OPERATOR_BLS.publicKey));
      await expect(f.vault.remunerate(...remunerateArgs(v2.cert)))
        .to.be.revertedWithCustomError(f.vault, "GuaranteeAlreadyConsumed")
        .withArgs(v2.cert.guaranteeId, 1n);
    });

    it("a verdict can never become passing after the deadline (only the validator writes it)", async () => {
      const f = await loadFixture(suretyFixture);
      await f.vault.connect(f.alice).deposit({ value: 5n * ONE });
      const v2 = await v2Setup(f);
      await v2.request();
      await v2.answer(10); // fails before the deadline
      await expect(
        f.validationRegistry
          .connect(f.bob)
          .validationResponse(v2.cert.requestHash, 100, "ipfs://fake", hashText("x"), TAG),
      ).to.be.revertedWithCustomError(f.validationRegistry, "RequestNotFound");
      await time.increaseTo(v2.policy.deadline + 1n);
      await v2.answer(100); // the validator changes its mind too late
      await expect(f.vault.remunerate(...remunerateArgs(v2.cert))).to.be.revertedWithCustomError(
        f.vault,
        "ValidationAfterDeadline",
      );
    });

    it("documents the V2 gap: a pending V2 guarantee is not reserved on chain (Core must bound deadlines)", async () => {
      // See docs/contracts.md, Security review: only committed debits are obligations. A V2 guarantee that
      // waits for validation longer than the withdrawal grace period can be escaped by a withdrawal.
      const f = await loadFixture(suretyFixture);
      await f.vault.connect(f.alice).deposit({ value: 2n * ONE });
      const v2 = await v2Setup(f, 1n, 2n * ONE, 10 * TIMINGS.withdrawalGracePeriod);
      await f.vault.connect(f.alice).requestWithdrawal(ETH, 2n * ONE);
      await time.increase(TIMINGS.withdrawalGracePeriod);
      await f.vault.connect(f.alice).finalizeWithdrawal(ETH);
      await v2.request();
      await v2.answer(90);
      await expect(f.vault.remunerate(...remunerateArgs(v2.cert)))
        .to.be.revertedWithCustomError(f.vault, "InsufficientFreeCollateral")
        .withArgs(f.alice.address, ETH, 0n, 2n * ONE);
    });
  });

  describe("pause", () => {
    it("stops deposits and withdrawals but never the paths that pay creditors", async () => {
      const f = await loadFixture(suretyFixture);
      const { vault, clearingHouse, operator, alice, bob, carol } = f;
      await vault.connect(alice).deposit({ value: 5n * ONE });
      await vault.connect(carol).deposit({ value: 5n * ONE });
      await vault.connect(alice).requestWithdrawal(ETH, ONE);
      const c = buildCycle(1, [
        { asset: ETH, participant: alice.address, debit: ONE, credit: 0n },
        { asset: ETH, participant: carol.address, debit: ONE, credit: 0n },
        { asset: ETH, participant: bob.address, debit: 0n, credit: 2n * ONE },
      ]);
      await clearingHouse.connect(operator).commitCycle(
        1,
        {
          root: c.root,
          guaranteesRoot: GUARANTEES_ROOT,
          debitsRoot: c.debitsRoot,
        },
        c.totals,
        c.debtors,
        [],
      );
      const v2 = await v2Setup(f);
      await v2.request();
      await v2.answer(90);
      await vault.pause();
      await expect(vault.connect(alice).deposit({ value: 1 })).to.be.revertedWithCustomError(
        vault,
        "EnforcedPause",
      );
      await time.increase(TIMINGS.withdrawalGracePeriod);
      await expect(vault.connect(alice).finalizeWithdrawal(ETH)).to.be.revertedWithCustomError(
        vault,
        "EnforcedPause",
      );
      await clearingHouse.connect(alice).payNetDebit(1, ETH, { value: ONE });
      await clearingHouse.coverDefault(1, ETH, carol.address);
      await clearingHouse.claimNetCredit(1, ETH, bob.address, ...c.claimOf(ETH, bob.address));
      await vault.remunerate(...remunerateArgs(v2.cert));
      await vault.connect(alice).cancelWithdrawal(ETH);
    });
  });
});
