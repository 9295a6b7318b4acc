/**
 * The money invariants of docs/protocol.md, "Collateral and safety invariants", shown on whole scenarios rather than single calls:
 *  1. Vault holdings = sum of user balances (and ClearingHouse holdings = its unclaimed liquidity).
 *  2. A withdrawal never takes collateral needed by a committed, unpaid net debit.
 *  3. A guarantee accepted before a withdrawal request became visible is committed (and its default
 *     covered) before that withdrawal can finalize.
 *  4. Every committed net debit ends paid or covered from the debtor's collateral.
 * Plus the lifecycle rule: no guarantee is paid twice (netting vs remuneration, in both orders).
 */
import { loadFixture, time } from "@nomicfoundation/hardhat-network-helpers";
import { expect } from "chai";
import { ethers } from "hardhat";
import { id as hashText, parseEther } from "ethers";

import {
  ETH,
  buildCycle,
  GUARANTEES_ROOT,
  PAYMENT_DELAY,
  type Position,
  remunerateArgs,
  suretyFixture,
  TIMINGS,
  transfer,
  v2Certificate,
  validatedV2Fixture,
} from "./helpers";

const ONE = parseEther("1");
const USD = 1_000_000n;

type Fixture = Awaited<ReturnType<typeof suretyFixture>>;

/** Invariant 1 for every asset and both contracts. */
async function expectHoldingsMatchBooks(f: Fixture): Promise<void> {
  const users = [f.alice, f.bob, f.carol, f.dave, f.outsider].map((u) => u.address);
  for (const asset of [ETH, f.usdAddress]) {
    let sum = 0n;
    for (const user of users) sum += await f.vault.balanceOf(user, asset);
    const vaultHoldings =
      asset === ETH
        ? await ethers.provider.getBalance(f.vaultAddress)
        : await f.usd.balanceOf(f.vaultAddress);
    const chHoldings =
      asset === ETH
        ? await ethers.provider.getBalance(f.clearingHouseAddress)
        : await f.usd.balanceOf(f.clearingHouseAddress);
    // The ClearingHouse holds the unclaimed liquidity, the bond and the payouts set aside (pull payments).
    let payouts = 0n;
    for (const user of users) payouts += await f.clearingHouse.payoutOf(asset, user);
    expect(vaultHoldings, `Vault holdings (${asset})`).to.equal(sum);
    expect(chHoldings, `ClearingHouse holdings (${asset})`).to.equal(
      (await f.clearingHouse.heldLiquidity(asset)) + (await f.clearingHouse.bondOf(asset)) + payouts,
    );
  }
}

describe("Invariants (docs/protocol.md)", () => {
  describe("1. holdings equal the books", () => {
    it("after every step of a mixed scenario (deposits, withdrawals, clearing, defaults, claims, remuneration)", async () => {
      const f = await loadFixture(suretyFixture);
      const { vault, clearingHouse, operator, alice, bob, carol, dave, usdAddress } = f;
      const steps: Array<[string, () => Promise<unknown>]> = [
        ["alice deposits ETH", () => vault.connect(alice).deposit({ value: 5n * ONE })],
        ["bob deposits tUSD", () => vault.connect(bob).depositToken(usdAddress, 300n * USD)],
        ["carol deposits both", () => vault.connect(carol).deposit({ value: 2n * ONE })],
        ["carol deposits tUSD", () => vault.connect(carol).depositToken(usdAddress, 50n * USD)],
        ["alice requests a withdrawal", () => vault.connect(alice).requestWithdrawal(ETH, ONE)],
        [
          "cycle 1 commits",
          () => {
            const c = buildCycle(1, [
              ...transfer(ETH, alice.address, dave.address, 2n * ONE),
              ...transfer(usdAddress, bob.address, carol.address, 120n * USD),
            ]);
            return clearingHouse.connect(operator).commitCycle(
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
          },
        ],
        ["alice pays her debit", () => clearingHouse.connect(alice).payNetDebit(1, ETH, { value: 2n * ONE })],
        ["time passes", () => time.increase(TIMINGS.withdrawalGracePeriod)],
        ["bob's default is covered", () => clearingHouse.coverDefault(1, usdAddress, bob.address)],
        [
          "dave claims",
          () => {
            const c = buildCycle(1, [
              ...transfer(ETH, alice.address, dave.address, 2n * ONE),
              ...transfer(usdAddress, bob.address, carol.address, 120n * USD),
            ]);
            return clearingHouse.claimNetCredit(1, ETH, dave.address, ...c.claimOf(ETH, dave.address));
          },
        ],
        ["dave pulls his payout", () => clearingHouse.connect(dave).withdrawPayout(ETH, dave.address)],
        ["alice finalizes her withdrawal", () => vault.connect(alice).finalizeWithdrawal(ETH)],
        [
          "carol is remunerated by a V2 guarantee of bob",
          async () => {
            const policy = {
              registry: f.registryAddress,
              validator: f.validator.address,
              agentId: 1n,
              minScore: 50,
              jobHash: hashText("job"),
              tag: "t",
              deadline: BigInt((await time.latest()) + 3600),
            };
            const cert = v2Certificate({
              chainId: f.chainId,
              vault: f.vaultAddress,
              user: bob.address,
              recipient: carol.address,
              reqId: 9n,
              amount: 30n * USD,
              asset: usdAddress,
              policy,
            });
            await f.validationRegistry
              .connect(carol)
              .validationRequest(f.validator.address, 1n, "", cert.requestHash);
            await f.validationRegistry
              .connect(f.validator)
              .validationResponse(cert.requestHash, 60, "", hashText("e"), "t");
            return vault.connect(carol).remunerate(...remunerateArgs(cert));
          },
        ],
      ];
      for (const [label, step] of steps) {
        await step();
        await expectHoldingsMatchBooks(f).catch((e: Error) => {
          throw new Error(`after "${label}": ${e.message}`);
        });
      }
      // Sanity on where the money went.
      expect(await vault.balanceOf(alice.address, ETH)).to.equal(4n * ONE); // 5 - 1 withdrawn (paid debit from wallet)
      expect(await vault.balanceOf(bob.address, usdAddress)).to.equal(300n * USD - 120n * USD - 30n * USD);
    });
  });

  describe("2. withdrawals never take committed, unpaid debits", () => {
    it("a full withdrawal pays only balance minus obligations, and the debit is still covered in full", async () => {
      const f = await loadFixture(suretyFixture);
      const { vault, clearingHouse, operator, alice, bob } = f;
      await vault.connect(alice).deposit({ value: 10n * ONE });
      await vault.connect(alice).requestWithdrawal(ETH, 10n * ONE);
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
      await time.increase(TIMINGS.withdrawalGracePeriod);
      await expect(vault.connect(alice).finalizeWithdrawal(ETH))
        .to.emit(vault, "WithdrawalFinalized")
        .withArgs(1n, alice.address, ETH, 10n * ONE, 6n * ONE);
      expect(await vault.balanceOf(alice.address, ETH)).to.equal(4n * ONE);
      await clearingHouse.coverDefault(1, ETH, alice.address);
      await clearingHouse.claimNetCredit(1, ETH, bob.address, ...c.claimOf(ETH, bob.address));
      await expect(clearingHouse.connect(bob).withdrawPayout(ETH, bob.address)).to.changeEtherBalance(
        bob,
        4n * ONE,
      );
      await expectHoldingsMatchBooks(f);
    });
  });

  describe("3. the grace period outlasts the clearing path", () => {
    it("payer withdraws right after receiving guarantees, the cycle commits, payer defaults: creditor paid in full, withdrawal gets the rest", async () => {
      const f = await loadFixture(suretyFixture);
      const { vault, clearingHouse, operator, alice, bob, carol } = f;
      await vault.connect(alice).deposit({ value: 10n * ONE });
      // t0: Core accepted guarantees alice → bob (3 ETH) and alice → carol (4 ETH) in the open cycle;
      // right after, alice asks to withdraw everything.
      await vault.connect(alice).requestWithdrawal(ETH, 10n * ONE);
      const requestedAt = BigInt(await time.latest());
      const { finalizableAt } = await vault.pendingWithdrawal(alice.address, ETH);

      // Worst case: the cycle closes a full cycleLength later and is committed commitDelay after that.
      await time.setNextBlockTimestamp(requestedAt + BigInt(TIMINGS.cycleLength + TIMINGS.commitDelay));
      const positions: Position[] = [
        { asset: ETH, participant: alice.address, debit: 7n * ONE, credit: 0n },
        { asset: ETH, participant: bob.address, debit: 0n, credit: 3n * ONE },
        { asset: ETH, participant: carol.address, debit: 0n, credit: 4n * ONE },
      ];
      const c = buildCycle(1, positions);
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
      const { paymentDeadline, defaultDeadline } = await clearingHouse.getCycle(1);
      expect(defaultDeadline).to.be.lessThan(finalizableAt); // the whole clearing path fits in the grace period

      // The withdrawal cannot finalize before the default can be covered.
      await expect(vault.connect(alice).finalizeWithdrawal(ETH)).to.be.revertedWithCustomError(
        vault,
        "WithdrawalNotReady",
      );
      // alice does not pay; the keeper covers the default by the default deadline.
      await time.setNextBlockTimestamp(paymentDeadline + 1n);
      await clearingHouse.coverDefault(1, ETH, alice.address);
      expect(BigInt(await time.latest())).to.be.lessThanOrEqual(defaultDeadline);

      await clearingHouse.claimNetCredit(1, ETH, bob.address, ...c.claimOf(ETH, bob.address));
      await clearingHouse.claimNetCredit(1, ETH, carol.address, ...c.claimOf(ETH, carol.address));
      await expect(clearingHouse.connect(bob).withdrawPayout(ETH, bob.address)).to.changeEtherBalance(
        bob,
        3n * ONE,
      );
      await expect(clearingHouse.connect(carol).withdrawPayout(ETH, carol.address)).to.changeEtherBalance(
        carol,
        4n * ONE,
      );

      await time.increaseTo(finalizableAt);
      const tx = vault.connect(alice).finalizeWithdrawal(ETH);
      await expect(tx)
        .to.emit(vault, "WithdrawalFinalized")
        .withArgs(1n, alice.address, ETH, 10n * ONE, 3n * ONE);
      await expect(tx).to.changeEtherBalance(alice, 3n * ONE);
      expect(await vault.balanceOf(alice.address, ETH)).to.equal(0n);
      expect(await clearingHouse.heldLiquidity(ETH)).to.equal(0n);
      await expectHoldingsMatchBooks(f);
    });

    it("the setters refuse any timing that would break it", async () => {
      const { vault } = await loadFixture(suretyFixture);
      const path =
        TIMINGS.cycleLength +
        TIMINGS.commitDelay +
        TIMINGS.confirmationLag +
        2 * TIMINGS.challengeWindow +
        TIMINGS.paymentWindow +
        TIMINGS.defaultWindow;
      await expect(vault.setTimings({ ...TIMINGS, withdrawalGracePeriod: path }))
        .to.be.revertedWithCustomError(vault, "GracePeriodTooShort")
        .withArgs(path, path);
      // Core's confirmation lag counts: a larger lag needs a longer grace period.
      await expect(
        vault.setTimings({
          ...TIMINGS,
          confirmationLag: TIMINGS.withdrawalGracePeriod - path + TIMINGS.confirmationLag,
        }),
      )
        .to.be.revertedWithCustomError(vault, "GracePeriodTooShort")
        .withArgs(TIMINGS.withdrawalGracePeriod, TIMINGS.withdrawalGracePeriod);
      await expect(
        vault.setTimings({ ...TIMINGS, paymentWindow: TIMINGS.withdrawalGracePeriod }),
      ).to.be.revertedWithCustomError(vault, "GracePeriodTooShort");
    });
  });

  describe("4. every committed net debit ends paid or covered", () => {
    it("two assets, three debtors (one pays, one pays late, one defaults): all creditors paid in full", async () => {
      const f = await loadFixture(suretyFixture);
      const { vault, clearingHouse, operator, alice, bob, carol, dave, usdAddress } = f;
      await vault.connect(alice).deposit({ value: 5n * ONE });
      await vault.connect(bob).depositToken(usdAddress, 200n * USD);
      await vault.connect(carol).deposit({ value: 5n * ONE });
      const positions: Position[] = [
        { asset: ETH, participant: alice.address, debit: 2n * ONE, credit: 0n },
        { asset: ETH, participant: carol.address, debit: ONE, credit: 0n },
        { asset: ETH, participant: dave.address, debit: 0n, credit: 3n * ONE },
        ...transfer(usdAddress, bob.address, alice.address, 150n * USD),
      ];
      const c = buildCycle(1, positions);
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
      await clearingHouse.connect(alice).payNetDebit(1, ETH, { value: 2n * ONE });
      await time.increase(PAYMENT_DELAY + 1);
      await clearingHouse.connect(bob).payNetDebit(1, usdAddress); // late, before anyone covers
      await expect(clearingHouse.coverDefault(1, ETH, carol.address)).to.emit(
        clearingHouse,
        "CycleFinalized",
      );

      const cycle = await clearingHouse.getCycle(1);
      expect(cycle.finalized).to.equal(true);
      for (const d of c.debtors) {
        expect((await clearingHouse.debtOf(1, d.asset, d.debtor)).status).to.be.oneOf([2n, 3n]); // Paid | Covered
        expect(await vault.obligationOf(d.debtor, d.asset)).to.equal(0n);
      }
      for (const t of c.totals)
        expect((await clearingHouse.getCycleAsset(1, t.asset)).funded).to.equal(t.totalDebit);

      await clearingHouse.claimNetCredit(1, ETH, dave.address, ...c.claimOf(ETH, dave.address));
      await clearingHouse.claimNetCredit(
        1,
        usdAddress,
        alice.address,
        ...c.claimOf(usdAddress, alice.address),
      );
      expect(await clearingHouse.heldLiquidity(ETH)).to.equal(0n);
      expect(await clearingHouse.heldLiquidity(usdAddress)).to.equal(0n);
      await expectHoldingsMatchBooks(f);
    });
  });

  describe("no guarantee is paid twice", () => {
    async function v2Fixture() {
      const f = await validatedV2Fixture();
      const cycle = buildCycle(1, transfer(ETH, f.alice.address, f.bob.address, 2n * ONE));
      return { ...f, cycle };
    }

    it("remunerated first: a cycle listing it commits, skips the id and reports it; it stays Remunerated", async () => {
      const { vault, clearingHouse, operator, cert, cycle } = await loadFixture(v2Fixture);
      await vault.remunerate(...remunerateArgs(cert));
      await expect(
        clearingHouse.connect(operator).commitCycle(
          1,
          {
            root: cycle.root,
            guaranteesRoot: GUARANTEES_ROOT,
            debitsRoot: cycle.debitsRoot,
          },
          cycle.totals,
          cycle.debtors,
          [cert.guaranteeId],
        ),
      )
        .to.emit(vault, "GuaranteeNettingSkipped")
        .withArgs(cert.guaranteeId, 1n);
      expect(await clearingHouse.lastCycleId()).to.equal(1n);
      expect(await vault.consumption(cert.guaranteeId)).to.equal(1n); // still Remunerated: paid once
    });

    it("netted first: it cannot be remunerated", async () => {
      const { vault, clearingHouse, operator, cert, cycle, alice } = await loadFixture(v2Fixture);
      await clearingHouse.connect(operator).commitCycle(
        1,
        {
          root: cycle.root,
          guaranteesRoot: GUARANTEES_ROOT,
          debitsRoot: cycle.debitsRoot,
        },
        cycle.totals,
        cycle.debtors,
        [cert.guaranteeId],
      );
      await expect(vault.remunerate(...remunerateArgs(cert)))
        .to.be.revertedWithCustomError(vault, "GuaranteeAlreadyConsumed")
        .withArgs(cert.guaranteeId, 2n);
      expect(await vault.consumption(cert.guaranteeId)).to.equal(2n); // still Netted
      expect(await vault.balanceOf(alice.address, ETH)).to.equal(10n * ONE); // nothing left the collateral
    });
  });
});
