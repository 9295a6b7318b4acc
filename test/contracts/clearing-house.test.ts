import { loadFixture, time } from "@nomicfoundation/hardhat-network-helpers";
import { anyValue } from "@nomicfoundation/hardhat-chai-matchers/withArgs";
import { expect } from "chai";
import { ethers } from "hardhat";
import { ZeroAddress, id as hashText, parseEther } from "ethers";

import { clearingHouseFactory } from "../../scripts/deploy";
import {
  ETH,
  GUARANTEES_ROOT,
  PAYMENT_DELAY,
  type Position,
  TIMINGS,
  buildCycle,
  suretyFixture,
} from "./helpers";

const ONE = parseEther("1");
const USD = 1_000_000n;

describe("ClearingHouse", () => {
  async function collateralFixture() {
    const f = await suretyFixture();
    await f.vault.connect(f.alice).deposit({ value: 10n * ONE });
    await f.vault.connect(f.carol).depositToken(f.usdAddress, 500n * USD);
    // Two assets in one cycle: alice owes 3 ETH (bob +2, carol +1); carol owes 100 tUSD (alice +100).
    const positions: Position[] = [
      { asset: ETH, participant: f.alice.address, debit: 3n * ONE, credit: 0n },
      { asset: ETH, participant: f.bob.address, debit: 0n, credit: 2n * ONE },
      { asset: ETH, participant: f.carol.address, debit: 0n, credit: ONE },
      { asset: f.usdAddress, participant: f.carol.address, debit: 100n * USD, credit: 0n },
      { asset: f.usdAddress, participant: f.alice.address, debit: 0n, credit: 100n * USD },
    ];
    const cycle = buildCycle(1, positions);
    const netted = [hashText("v2-guarantee-1")];
    return { ...f, cycle, netted };
  }

  async function committedFixture() {
    const f = await collateralFixture();
    await f.clearingHouse.connect(f.operator).commitCycle(
      1,
      {
        root: f.cycle.root,
        guaranteesRoot: GUARANTEES_ROOT,
        debitsRoot: f.cycle.debitsRoot,
      },
      f.cycle.totals,
      f.cycle.debtors,
      f.netted,
    );
    return f;
  }

  /** Committed, and the challenge window has closed: claims are open. */
  async function claimableFixture() {
    const f = await committedFixture();
    await time.increase(TIMINGS.challengeWindow + 1);
    return f;
  }

  describe("commitCycle", () => {
    it("records the cycle, its obligations in the Vault and the netted V2 ids, with events", async () => {
      const { clearingHouse, vault, operator, cycle, netted, alice, carol, usdAddress } =
        await loadFixture(collateralFixture);
      const now = (await time.latest()) + 1;
      await time.setNextBlockTimestamp(now);
      const paymentDeadline = BigInt(now + PAYMENT_DELAY);
      const defaultDeadline = paymentDeadline + BigInt(TIMINGS.defaultWindow);
      const tx = clearingHouse.connect(operator).commitCycle(
        1,
        {
          root: cycle.root,
          guaranteesRoot: GUARANTEES_ROOT,
          debitsRoot: cycle.debitsRoot,
        },
        cycle.totals,
        cycle.debtors,
        netted,
      );
      await expect(tx)
        .to.emit(clearingHouse, "CycleCommitted")
        .withArgs(1n, cycle.root, paymentDeadline, defaultDeadline, 2, 2, 1);
      await expect(tx)
        .to.emit(clearingHouse, "CycleAssetCommitted")
        .withArgs(1n, ETH, 3n * ONE);
      await expect(tx)
        .to.emit(clearingHouse, "CycleAssetCommitted")
        .withArgs(1n, usdAddress, 100n * USD);
      await expect(tx)
        .to.emit(clearingHouse, "NetDebitRecorded")
        .withArgs(1n, ETH, alice.address, 3n * ONE);
      await expect(tx)
        .to.emit(clearingHouse, "NetDebitRecorded")
        .withArgs(1n, usdAddress, carol.address, 100n * USD);
      await expect(tx)
        .to.emit(vault, "ObligationRecorded")
        .withArgs(alice.address, ETH, 3n * ONE, 3n * ONE);
      await expect(tx).to.emit(vault, "GuaranteeNetted").withArgs(netted[0]);
      await expect(tx).not.to.emit(clearingHouse, "CycleFinalized");

      expect(await clearingHouse.lastCycleId()).to.equal(1n);
      const c = await clearingHouse.getCycle(1);
      expect(c.root).to.equal(cycle.root);
      expect(c.paymentDeadline).to.equal(paymentDeadline);
      expect(c.defaultDeadline).to.equal(defaultDeadline);
      expect(c.committedAt).to.equal(BigInt(now));
      expect(c.openDebts).to.equal(2n);
      expect(c.finalized).to.equal(false);
      expect((await clearingHouse.getCycleAsset(1, ETH)).totalDebit).to.equal(3n * ONE);
      const debt = await clearingHouse.debtOf(1, ETH, alice.address);
      expect(debt.amount).to.equal(3n * ONE);
      expect(debt.status).to.equal(1n); // Open
      expect(await vault.obligationOf(alice.address, ETH)).to.equal(3n * ONE);
      expect(await vault.obligationOf(carol.address, usdAddress)).to.equal(100n * USD);
      expect(await vault.consumption(netted[0])).to.equal(2n); // Netted
    });

    it("finalizes at once a cycle without debtors", async () => {
      const { clearingHouse, operator } = await loadFixture(collateralFixture);
      const empty = buildCycle(1, []);
      const tx = clearingHouse.connect(operator).commitCycle(
        1,
        {
          root: empty.root,
          guaranteesRoot: GUARANTEES_ROOT,
          debitsRoot: empty.debitsRoot,
        },
        [],
        [],
        [],
      );
      await expect(tx)
        .to.emit(clearingHouse, "CycleCommitted")
        .withArgs(1n, empty.root, anyValue, anyValue, 0, 0, 0);
      await expect(tx).to.emit(clearingHouse, "CycleFinalized").withArgs(1n);
      expect((await clearingHouse.getCycle(1)).finalized).to.equal(true);
    });

    it("takes cycle ids strictly in sequence: never twice, never skipped", async () => {
      const { clearingHouse, operator, cycle } = await loadFixture(committedFixture);
      const c = clearingHouse.connect(operator);
      await expect(
        c.commitCycle(
          1,
          {
            root: cycle.root,
            guaranteesRoot: GUARANTEES_ROOT,
            debitsRoot: cycle.debitsRoot,
          },
          [],
          [],
          [],
        ),
      )
        .to.be.revertedWithCustomError(clearingHouse, "UnexpectedCycleId")
        .withArgs(2n, 1n);
      await expect(
        c.commitCycle(
          3,
          {
            root: cycle.root,
            guaranteesRoot: GUARANTEES_ROOT,
            debitsRoot: cycle.debitsRoot,
          },
          [],
          [],
          [],
        ),
      )
        .to.be.revertedWithCustomError(clearingHouse, "UnexpectedCycleId")
        .withArgs(2n, 3n);
      await expect(
        c.commitCycle(
          0,
          {
            root: cycle.root,
            guaranteesRoot: GUARANTEES_ROOT,
            debitsRoot: cycle.debitsRoot,
          },
          [],
          [],
          [],
        ),
      )
        .to.be.revertedWithCustomError(clearingHouse, "UnexpectedCycleId")
        .withArgs(2n, 0n);
      await expect(
        c.commitCycle(
          2,
          {
            root: cycle.root,
            guaranteesRoot: GUARANTEES_ROOT,
            debitsRoot: cycle.debitsRoot,
          },
          [],
          [],
          [],
        ),
      ).to.emit(clearingHouse, "CycleCommitted");
    });

    it("is for the operator only", async () => {
      const { clearingHouse, outsider, cycle, netted } = await loadFixture(collateralFixture);
      await expect(
        clearingHouse.connect(outsider).commitCycle(
          1,
          {
            root: cycle.root,
            guaranteesRoot: GUARANTEES_ROOT,
            debitsRoot: cycle.debitsRoot,
          },
          cycle.totals,
          cycle.debtors,
          netted,
        ),
      )
        .to.be.revertedWithCustomError(clearingHouse, "AccessControlUnauthorizedAccount")
        .withArgs(outsider.address, await clearingHouse.OPERATOR_ROLE());
    });

    it("rejects malformed cycles, each with its own error", async () => {
      const { clearingHouse, operator, cycle, alice, bob, usdAddress } = await loadFixture(collateralFixture);
      const c = clearingHouse.connect(operator);
      const [ethTotal, usdTotal] = cycle.totals;
      const [aliceDebt, carolDebt] = cycle.debtors;
      await expect(
        c.commitCycle(
          1,
          {
            root: ethers.ZeroHash,
            guaranteesRoot: GUARANTEES_ROOT,
            debitsRoot: "0xdddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd",
          },
          cycle.totals,
          cycle.debtors,
          [],
        ),
      ).to.be.revertedWithCustomError(clearingHouse, "EmptyRoot");
      await expect(
        c.commitCycle(
          1,
          {
            root: cycle.root,
            guaranteesRoot: GUARANTEES_ROOT,
            debitsRoot: cycle.debitsRoot,
          },
          [ethTotal, ethTotal],
          cycle.debtors,
          [],
        ),
      )
        .to.be.revertedWithCustomError(clearingHouse, "DuplicateCycleAsset")
        .withArgs(ETH);
      await expect(
        c.commitCycle(
          1,
          {
            root: cycle.root,
            guaranteesRoot: GUARANTEES_ROOT,
            debitsRoot: cycle.debitsRoot,
          },
          [{ ...ethTotal, totalCredit: ONE }, usdTotal],
          cycle.debtors,
          [],
        ),
      )
        .to.be.revertedWithCustomError(clearingHouse, "UnbalancedAsset")
        .withArgs(ETH, 3n * ONE, ONE);
      await expect(
        c.commitCycle(
          1,
          {
            root: cycle.root,
            guaranteesRoot: GUARANTEES_ROOT,
            debitsRoot: cycle.debitsRoot,
          },
          cycle.totals,
          [{ ...aliceDebt, amount: 0n }, carolDebt],
          [],
        ),
      )
        .to.be.revertedWithCustomError(clearingHouse, "InvalidObligation")
        .withArgs(ETH, alice.address, 0n);
      await expect(
        c.commitCycle(
          1,
          {
            root: cycle.root,
            guaranteesRoot: GUARANTEES_ROOT,
            debitsRoot: cycle.debitsRoot,
          },
          cycle.totals,
          [{ ...aliceDebt, debtor: ZeroAddress }, carolDebt],
          [],
        ),
      )
        .to.be.revertedWithCustomError(clearingHouse, "InvalidObligation")
        .withArgs(ETH, ZeroAddress, 3n * ONE);
      const huge = 2n ** 248n;
      await expect(
        c.commitCycle(
          1,
          {
            root: cycle.root,
            guaranteesRoot: GUARANTEES_ROOT,
            debitsRoot: cycle.debitsRoot,
          },
          [{ ...ethTotal, totalDebit: huge, totalCredit: huge }, usdTotal],
          [{ ...aliceDebt, amount: huge }, carolDebt],
          [],
        ),
      ).to.be.revertedWithCustomError(clearingHouse, "SafeCastOverflowedUintDowncast");
      await expect(
        c.commitCycle(
          1,
          {
            root: cycle.root,
            guaranteesRoot: GUARANTEES_ROOT,
            debitsRoot: cycle.debitsRoot,
          },
          [ethTotal],
          cycle.debtors,
          [],
        ),
      )
        .to.be.revertedWithCustomError(clearingHouse, "UnknownCycleAsset")
        .withArgs(1n, usdAddress);
      const halves = [
        { ...aliceDebt, amount: ONE },
        { ...aliceDebt, amount: 2n * ONE },
      ];
      await expect(
        c.commitCycle(
          1,
          {
            root: cycle.root,
            guaranteesRoot: GUARANTEES_ROOT,
            debitsRoot: cycle.debitsRoot,
          },
          cycle.totals,
          [...halves, carolDebt],
          [],
        ),
      )
        .to.be.revertedWithCustomError(clearingHouse, "DuplicateDebtor")
        .withArgs(ETH, alice.address);
      await expect(
        c.commitCycle(
          1,
          {
            root: cycle.root,
            guaranteesRoot: GUARANTEES_ROOT,
            debitsRoot: cycle.debitsRoot,
          },
          cycle.totals,
          [{ ...aliceDebt, debtor: bob.address, amount: ONE }, aliceDebt, carolDebt],
          [],
        ),
      )
        .to.be.revertedWithCustomError(clearingHouse, "ObligationSumMismatch")
        .withArgs(ETH, 4n * ONE, 3n * ONE);
      await expect(
        c.commitCycle(
          1,
          {
            root: cycle.root,
            guaranteesRoot: GUARANTEES_ROOT,
            debitsRoot: cycle.debitsRoot,
          },
          cycle.totals,
          [aliceDebt],
          [],
        ),
      )
        .to.be.revertedWithCustomError(clearingHouse, "ObligationSumMismatch")
        .withArgs(usdAddress, 0n, 100n * USD);
      expect(await clearingHouse.lastCycleId()).to.equal(0n);
    });

    it("skips and reports a V2 id netted before instead of reverting the commit", async () => {
      const { clearingHouse, vault, operator, netted } = await loadFixture(committedFixture);
      const next = buildCycle(2, []);
      const fresh = hashText("fresh");
      await expect(
        clearingHouse.connect(operator).commitCycle(
          2,
          {
            root: next.root,
            guaranteesRoot: GUARANTEES_ROOT,
            debitsRoot: next.debitsRoot,
          },
          [],
          [],
          [netted[0], fresh],
        ),
      )
        .to.emit(vault, "GuaranteeNettingSkipped")
        .withArgs(netted[0], 2n)
        .and.to.emit(clearingHouse, "CycleCommitted")
        .withArgs(2n, next.root, anyValue, anyValue, 0n, 0n, 1n);
      expect(await clearingHouse.lastCycleId()).to.equal(2n);
      expect(await vault.consumption(fresh)).to.equal(2n);
    });
  });

  describe("payNetDebit", () => {
    it("takes exactly the ETH debit, releases the obligation and funds the cycle", async () => {
      const { clearingHouse, vault, alice } = await loadFixture(committedFixture);
      const tx = clearingHouse.connect(alice).payNetDebit(1, ETH, { value: 3n * ONE });
      await expect(tx)
        .to.emit(clearingHouse, "NetDebitPaid")
        .withArgs(1n, ETH, alice.address, 3n * ONE, false);
      await expect(tx)
        .to.emit(vault, "ObligationReleased")
        .withArgs(alice.address, ETH, 3n * ONE, 0n);
      await expect(tx).to.changeEtherBalances([alice, clearingHouse], [-3n * ONE, 3n * ONE]);
      expect((await clearingHouse.debtOf(1, ETH, alice.address)).status).to.equal(2n); // Paid
      expect((await clearingHouse.getCycleAsset(1, ETH)).funded).to.equal(3n * ONE);
      expect(await clearingHouse.heldLiquidity(ETH)).to.equal(3n * ONE);
      expect(await vault.obligationOf(alice.address, ETH)).to.equal(0n);
      expect(await vault.balanceOf(alice.address, ETH)).to.equal(10n * ONE); // collateral untouched
    });

    it("pulls a token debit and finalizes the cycle when the last debtor pays", async () => {
      const { clearingHouse, usd, usdAddress, alice, carol } = await loadFixture(committedFixture);
      await clearingHouse.connect(alice).payNetDebit(1, ETH, { value: 3n * ONE });
      const tx = clearingHouse.connect(carol).payNetDebit(1, usdAddress);
      await expect(tx)
        .to.emit(clearingHouse, "NetDebitPaid")
        .withArgs(1n, usdAddress, carol.address, 100n * USD, false);
      await expect(tx).to.emit(clearingHouse, "CycleFinalized").withArgs(1n);
      await expect(tx).to.changeTokenBalances(usd, [carol, clearingHouse], [-100n * USD, 100n * USD]);
      const c = await clearingHouse.getCycle(1);
      expect(c.finalized).to.equal(true);
      expect(c.openDebts).to.equal(0n);
    });

    it("accepts a late payment while the debt is not yet covered", async () => {
      const { clearingHouse, alice } = await loadFixture(committedFixture);
      await time.increase(PAYMENT_DELAY + 10);
      await expect(clearingHouse.connect(alice).payNetDebit(1, ETH, { value: 3n * ONE }))
        .to.emit(clearingHouse, "NetDebitPaid")
        .withArgs(1n, ETH, alice.address, 3n * ONE, true);
    });

    it("rejects a wrong ETH amount, ETH with a token debit, a stranger, and paying twice", async () => {
      const { clearingHouse, alice, carol, bob, usdAddress } = await loadFixture(committedFixture);
      await expect(clearingHouse.connect(alice).payNetDebit(1, ETH, { value: ONE }))
        .to.be.revertedWithCustomError(clearingHouse, "IncorrectPayment")
        .withArgs(3n * ONE, ONE);
      await expect(clearingHouse.connect(carol).payNetDebit(1, usdAddress, { value: 1 }))
        .to.be.revertedWithCustomError(clearingHouse, "UnexpectedEth")
        .withArgs(1n);
      await expect(clearingHouse.connect(bob).payNetDebit(1, ETH, { value: ONE }))
        .to.be.revertedWithCustomError(clearingHouse, "NoDebt")
        .withArgs(1n, ETH, bob.address);
      await expect(clearingHouse.connect(alice).payNetDebit(9, ETH, { value: ONE }))
        .to.be.revertedWithCustomError(clearingHouse, "NoDebt")
        .withArgs(9n, ETH, alice.address);
      await clearingHouse.connect(alice).payNetDebit(1, ETH, { value: 3n * ONE });
      await expect(clearingHouse.connect(alice).payNetDebit(1, ETH, { value: 3n * ONE }))
        .to.be.revertedWithCustomError(clearingHouse, "DebtAlreadyResolved")
        .withArgs(1n, ETH, alice.address, 2n);
    });

    it("rejects a fee-on-transfer token payment that arrives short", async () => {
      const { clearingHouse, feeToken, operator, alice, bob } = await loadFixture(collateralFixture);
      const fee = await feeToken.getAddress();
      const cycle = buildCycle(1, [
        { asset: fee, participant: alice.address, debit: 10_000n, credit: 0n },
        { asset: fee, participant: bob.address, debit: 0n, credit: 10_000n },
      ]);
      await clearingHouse.connect(operator).commitCycle(
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
      await expect(clearingHouse.connect(alice).payNetDebit(1, fee))
        .to.be.revertedWithCustomError(clearingHouse, "IncorrectPayment")
        .withArgs(10_000n, 9_900n);
    });
  });

  describe("coverDefault", () => {
    it("opens only after the payment deadline", async () => {
      const { clearingHouse, alice, outsider } = await loadFixture(committedFixture);
      const { paymentDeadline } = await clearingHouse.getCycle(1);
      await time.setNextBlockTimestamp(paymentDeadline);
      await expect(clearingHouse.connect(outsider).coverDefault(1, ETH, alice.address))
        .to.be.revertedWithCustomError(clearingHouse, "PaymentWindowOpen")
        .withArgs(1n, paymentDeadline);
    });

    it("moves the debtor's collateral to the ClearingHouse (anyone may trigger it)", async () => {
      const { clearingHouse, vault, alice, outsider } = await loadFixture(committedFixture);
      await time.increase(PAYMENT_DELAY + 1);
      const tx = clearingHouse.connect(outsider).coverDefault(1, ETH, alice.address);
      await expect(tx)
        .to.emit(clearingHouse, "DefaultCovered")
        .withArgs(1n, ETH, alice.address, 3n * ONE, 3n * ONE);
      await expect(tx)
        .to.emit(vault, "DefaultCovered")
        .withArgs(alice.address, ETH, 3n * ONE, 3n * ONE);
      await expect(tx).to.changeEtherBalances([vault, clearingHouse], [-3n * ONE, 3n * ONE]);
      expect(await vault.balanceOf(alice.address, ETH)).to.equal(7n * ONE);
      expect(await vault.obligationOf(alice.address, ETH)).to.equal(0n);
      expect((await clearingHouse.debtOf(1, ETH, alice.address)).status).to.equal(3n); // Covered
      expect((await clearingHouse.getCycleAsset(1, ETH)).funded).to.equal(3n * ONE);
    });

    it("covers token debits and finalizes the cycle", async () => {
      const { clearingHouse, usd, usdAddress, alice, carol } = await loadFixture(committedFixture);
      await clearingHouse.connect(alice).payNetDebit(1, ETH, { value: 3n * ONE });
      await time.increase(PAYMENT_DELAY + 1);
      const tx = clearingHouse.coverDefault(1, usdAddress, carol.address);
      await expect(tx)
        .to.emit(clearingHouse, "DefaultCovered")
        .withArgs(1n, usdAddress, carol.address, 100n * USD, 100n * USD);
      await expect(tx).to.emit(clearingHouse, "CycleFinalized").withArgs(1n);
      await expect(tx).to.changeTokenBalances(usd, [clearingHouse], [100n * USD]);
    });

    it("records a shortfall when the collateral does not cover the debit", async () => {
      const { clearingHouse, vault, operator, dave, bob } = await loadFixture(collateralFixture);
      await vault.connect(dave).deposit({ value: ONE });
      const cycle = buildCycle(1, [
        { asset: ETH, participant: dave.address, debit: 3n * ONE, credit: 0n },
        { asset: ETH, participant: bob.address, debit: 0n, credit: 3n * ONE },
      ]);
      await clearingHouse.connect(operator).commitCycle(
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
      await expect(clearingHouse.coverDefault(1, ETH, dave.address))
        .to.emit(clearingHouse, "DefaultCovered")
        .withArgs(1n, ETH, dave.address, 3n * ONE, ONE);
      const asset = await clearingHouse.getCycleAsset(1, ETH);
      expect(asset.funded).to.equal(ONE);
      expect(asset.shortfall).to.equal(2n * ONE);
      expect(await vault.balanceOf(dave.address, ETH)).to.equal(0n);
      await expect(clearingHouse.claimNetCredit(1, ETH, bob.address, ...cycle.claimOf(ETH, bob.address)))
        .to.be.revertedWithCustomError(clearingHouse, "CreditNotYetFunded")
        .withArgs(1n, ETH, ONE, 3n * ONE);
    });

    it("rejects unknown debts and debts already resolved", async () => {
      const { clearingHouse, alice, bob } = await loadFixture(committedFixture);
      await time.increase(PAYMENT_DELAY + 1);
      await expect(clearingHouse.coverDefault(1, ETH, bob.address))
        .to.be.revertedWithCustomError(clearingHouse, "NoDebt")
        .withArgs(1n, ETH, bob.address);
      await clearingHouse.coverDefault(1, ETH, alice.address);
      await expect(clearingHouse.coverDefault(1, ETH, alice.address))
        .to.be.revertedWithCustomError(clearingHouse, "DebtAlreadyResolved")
        .withArgs(1n, ETH, alice.address, 3n);
      await expect(clearingHouse.connect(alice).payNetDebit(1, ETH, { value: 3n * ONE }))
        .to.be.revertedWithCustomError(clearingHouse, "DebtAlreadyResolved")
        .withArgs(1n, ETH, alice.address, 3n);
    });
  });

  describe("claimNetCredit", () => {
    it("sets a proven credit aside from funded liquidity, once; anyone may submit it; the creditor pulls it", async () => {
      const { clearingHouse, alice, bob, carol, outsider, cycle } = await loadFixture(claimableFixture);
      await clearingHouse.connect(alice).payNetDebit(1, ETH, { value: 3n * ONE });
      const tx = clearingHouse
        .connect(outsider)
        .claimNetCredit(1, ETH, bob.address, ...cycle.claimOf(ETH, bob.address));
      await expect(tx)
        .to.emit(clearingHouse, "NetCreditClaimed")
        .withArgs(1n, ETH, bob.address, 2n * ONE);
      // Pull payment: the claim sends nothing, the credit waits in bob's payout.
      await expect(tx).to.changeEtherBalances([bob, clearingHouse, outsider], [0n, 0n, 0n]);
      expect(await clearingHouse.payoutOf(ETH, bob.address)).to.equal(2n * ONE);
      // Only bob pulls it, to the address he names; then nothing is left.
      await expect(clearingHouse.connect(outsider).withdrawPayout(ETH, outsider.address))
        .to.be.revertedWithCustomError(clearingHouse, "NoPayout")
        .withArgs(ETH, outsider.address);
      const pull = clearingHouse.connect(bob).withdrawPayout(ETH, carol.address);
      await expect(pull)
        .to.emit(clearingHouse, "PayoutWithdrawn")
        .withArgs(ETH, bob.address, carol.address, 2n * ONE);
      await expect(pull).to.changeEtherBalances([carol, bob, clearingHouse], [2n * ONE, 0n, -2n * ONE]);
      expect(await clearingHouse.payoutOf(ETH, bob.address)).to.equal(0n);
      await expect(clearingHouse.connect(bob).withdrawPayout(ETH, bob.address))
        .to.be.revertedWithCustomError(clearingHouse, "NoPayout")
        .withArgs(ETH, bob.address);
      expect(await clearingHouse.isCreditClaimed(1, ETH, bob.address)).to.equal(true);
      expect((await clearingHouse.getCycleAsset(1, ETH)).claimed).to.equal(2n * ONE);
      expect(await clearingHouse.heldLiquidity(ETH)).to.equal(ONE);
      await expect(clearingHouse.claimNetCredit(1, ETH, bob.address, ...cycle.claimOf(ETH, bob.address)))
        .to.be.revertedWithCustomError(clearingHouse, "CreditAlreadyClaimed")
        .withArgs(1n, ETH, bob.address);
    });

    it("pays token credits funded by default coverage", async () => {
      const { clearingHouse, usd, usdAddress, alice, carol, cycle } = await loadFixture(claimableFixture);
      await time.increase(PAYMENT_DELAY + 1);
      await clearingHouse.coverDefault(1, usdAddress, carol.address);
      const tx = clearingHouse.claimNetCredit(
        1,
        usdAddress,
        alice.address,
        ...cycle.claimOf(usdAddress, alice.address),
      );
      await expect(tx)
        .to.emit(clearingHouse, "NetCreditClaimed")
        .withArgs(1n, usdAddress, alice.address, 100n * USD);
      await expect(tx).to.changeTokenBalances(usd, [alice, clearingHouse], [0n, 0n]);
      // Tokens are pulled like ETH (one flow for every asset; a token-blocked address names another).
      const pull = clearingHouse.connect(alice).withdrawPayout(usdAddress, alice.address);
      await expect(pull)
        .to.emit(clearingHouse, "PayoutWithdrawn")
        .withArgs(usdAddress, alice.address, alice.address, 100n * USD);
      await expect(pull).to.changeTokenBalances(usd, [alice, clearingHouse], [100n * USD, -100n * USD]);
      expect(await clearingHouse.payoutOf(usdAddress, alice.address)).to.equal(0n);
    });

    it("refuses credits not yet funded", async () => {
      const { clearingHouse, bob, cycle } = await loadFixture(claimableFixture);
      await expect(clearingHouse.claimNetCredit(1, ETH, bob.address, ...cycle.claimOf(ETH, bob.address)))
        .to.be.revertedWithCustomError(clearingHouse, "CreditNotYetFunded")
        .withArgs(1n, ETH, 0n, 2n * ONE);
    });

    it("rejects unknown cycles and assets, zero credits and bad proofs", async () => {
      const { clearingHouse, alice, bob, cycle, teth } = await loadFixture(claimableFixture);
      await clearingHouse.connect(alice).payNetDebit(1, ETH, { value: 3n * ONE });
      const [summary, proof] = cycle.claimOf(ETH, bob.address);
      await expect(clearingHouse.claimNetCredit(0, ETH, bob.address, summary, proof))
        .to.be.revertedWithCustomError(clearingHouse, "UnknownCycle")
        .withArgs(0n);
      await expect(clearingHouse.claimNetCredit(2, ETH, bob.address, summary, proof))
        .to.be.revertedWithCustomError(clearingHouse, "UnknownCycle")
        .withArgs(2n);
      const tethAddress = await teth.getAddress();
      await expect(clearingHouse.claimNetCredit(1, tethAddress, bob.address, summary, proof))
        .to.be.revertedWithCustomError(clearingHouse, "UnknownCycleAsset")
        .withArgs(1n, tethAddress);
      // Inflated credit, someone else's proof, a debtor claiming (its summary nets to a debit: no credit).
      await expect(
        clearingHouse.claimNetCredit(1, ETH, bob.address, { ...summary, inTotal: 3n * ONE }, proof),
      ).to.be.revertedWithCustomError(clearingHouse, "InvalidMerkleProof");
      await expect(
        clearingHouse.claimNetCredit(1, ETH, alice.address, summary, proof),
      ).to.be.revertedWithCustomError(clearingHouse, "InvalidMerkleProof");
      await expect(
        clearingHouse.claimNetCredit(1, ETH, alice.address, ...cycle.claimOf(ETH, alice.address)),
      ).to.be.revertedWithCustomError(clearingHouse, "ZeroCredit");
    });

    it("matches the StandardMerkleTree leaf encoding", async () => {
      const { clearingHouse, cycle, bob } = await loadFixture(claimableFixture);
      const leaf = cycle.tree.leafHash([1n, ETH, bob.address, 0n, 2n * ONE]);
      expect(await clearingHouse.leafHash(1, ETH, bob.address, 0, 2n * ONE)).to.equal(leaf);
    });
  });

  describe("wiring", () => {
    it("accepts ETH only from the Vault", async () => {
      const { clearingHouse, alice } = await loadFixture(suretyFixture);
      await expect(alice.sendTransaction({ to: await clearingHouse.getAddress(), value: 1 }))
        .to.be.revertedWithCustomError(clearingHouse, "UnexpectedEthSender")
        .withArgs(alice.address);
    });

    it("needs a Vault contract", async () => {
      const { clearingHouse, vault, admin, outsider } = await loadFixture(suretyFixture);
      await expect(
        (await clearingHouseFactory(admin)).deploy(
          outsider.address,
          admin.address,
          admin.address,
          admin.address,
          0,
          0,
          await vault.guaranteeVerifier(),
        ),
      )
        .to.be.revertedWithCustomError(clearingHouse, "InvalidVault")
        .withArgs(outsider.address);
      expect(await clearingHouse.vault()).to.equal(await vault.getAddress());
    });
  });
});
