/**
 * Issue 17, pull payments: every payment the ClearingHouse makes out of a cycle (net credits, refunds of
 * paid debts of vetoed cycles, double-listing refunds) is set aside in one ledger (`payoutOf`) and pulled by
 * its owner with `withdrawPayout(asset, to)`. A recipient wallet that rejects ETH can no longer block its
 * own credit, a keeper's call for it, or a veto's release; it names another address instead.
 */
import { loadFixture, time } from "@nomicfoundation/hardhat-network-helpers";
import { expect } from "chai";
import { ethers } from "hardhat";
import { parseEther } from "ethers";

import { EthRejectingWallet__factory } from "../../typechain-types";
import { ETH, GUARANTEES_ROOT, TIMINGS, buildCycle, suretyFixture, transfer } from "./helpers";

const ONE = parseEther("1");
const W = TIMINGS.challengeWindow;
/** ClearingHouse.DebtStatus */
const DEBT = { refunded: 7n };

describe("ClearingHouse pull payments (issue 17)", () => {
  async function fixture() {
    const f = await suretyFixture();
    const wallet = await new EthRejectingWallet__factory(f.admin).deploy();
    const walletAddress = await wallet.getAddress();
    const ch = f.clearingHouse;
    const chAddress = f.clearingHouseAddress;
    const call = (data: string, value = 0n) => wallet.execute(chAddress, data, { value });
    return { ...f, ch, chAddress, wallet, walletAddress, call };
  }

  /** Cycle 1: alice owes 3 ETH; the rejecting wallet is owed 2, bob 1. Alice has paid; the window closed. */
  async function claimableFixture() {
    const f = await fixture();
    await f.vault.connect(f.alice).deposit({ value: 5n * ONE });
    const cycle = buildCycle(1, [
      { asset: ETH, participant: f.alice.address, debit: 3n * ONE, credit: 0n },
      { asset: ETH, participant: f.walletAddress, debit: 0n, credit: 2n * ONE },
      { asset: ETH, participant: f.bob.address, debit: 0n, credit: ONE },
    ]);
    await f.ch.connect(f.operator).commitCycle(
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
    await f.ch.connect(f.alice).payNetDebit(1, ETH, { value: 3n * ONE });
    await time.increase(W + 1);
    return { ...f, cycle };
  }

  it("the harness really rejects ETH", async () => {
    const f = await loadFixture(fixture);
    await expect(f.admin.sendTransaction({ to: f.walletAddress, value: 1n }))
      .to.be.revertedWithCustomError(f.wallet, "EthRefused")
      .withArgs(f.admin.address, 1n);
  });

  it("a creditor that rejects ETH is still claimed (by anyone) and pulls its credit to another address", async () => {
    const f = await loadFixture(claimableFixture);
    // A keeper claims for both creditors: the rejecting wallet's claim no longer reverts.
    const claim = f.ch
      .connect(f.outsider)
      .claimNetCredit(1, ETH, f.walletAddress, ...f.cycle.claimOf(ETH, f.walletAddress));
    await expect(claim)
      .to.emit(f.ch, "NetCreditClaimed")
      .withArgs(1n, ETH, f.walletAddress, 2n * ONE);
    await expect(claim).to.changeEtherBalances([f.wallet, f.ch], [0n, 0n]);
    await expect(
      f.ch.connect(f.outsider).claimNetCredit(1, ETH, f.bob.address, ...f.cycle.claimOf(ETH, f.bob.address)),
    ).to.emit(f.ch, "NetCreditClaimed");
    expect(await f.ch.payoutOf(ETH, f.walletAddress)).to.equal(2n * ONE);
    // Pulling to itself fails only its own call, and leaves the payout in place...
    await expect(f.call(f.ch.interface.encodeFunctionData("withdrawPayout", [ETH, f.walletAddress])))
      .to.be.revertedWithCustomError(f.wallet, "EthRefused")
      .withArgs(f.chAddress, 2n * ONE);
    expect(await f.ch.payoutOf(ETH, f.walletAddress)).to.equal(2n * ONE);
    // ...bob is paid regardless...
    await expect(f.ch.connect(f.bob).withdrawPayout(ETH, f.bob.address)).to.changeEtherBalance(f.bob, ONE);
    // ...and the wallet names another address.
    const pull = f.call(f.ch.interface.encodeFunctionData("withdrawPayout", [ETH, f.carol.address]));
    await expect(pull)
      .to.emit(f.ch, "PayoutWithdrawn")
      .withArgs(ETH, f.walletAddress, f.carol.address, 2n * ONE);
    await expect(pull).to.changeEtherBalances([f.carol, f.ch], [2n * ONE, -2n * ONE]);
    expect(await f.ch.payoutOf(ETH, f.walletAddress)).to.equal(0n);
    expect(await ethers.provider.getBalance(f.chAddress)).to.equal(0n);
  });

  it("a paid debtor that rejects ETH does not block the release of its vetoed debt; it pulls the refund", async () => {
    const f = await loadFixture(fixture);
    // The wallet is a depositor and debtor: it owes 2 ETH to bob in cycle 1 and pays from the wallet.
    await f.wallet.execute(f.vaultAddress, f.vault.interface.encodeFunctionData("deposit"), {
      value: 3n * ONE,
    });
    const cycle = buildCycle(1, transfer(ETH, f.walletAddress, f.bob.address, 2n * ONE));
    await f.ch.connect(f.operator).commitCycle(
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
    await f.call(f.ch.interface.encodeFunctionData("payNetDebit", [1, ETH]), 2n * ONE);
    await f.ch.connect(f.guardian).vetoCycle(1);
    const release = f.ch.connect(f.outsider).releaseVetoedDebt(1, ETH, f.walletAddress);
    await expect(release)
      .to.emit(f.ch, "VetoedDebtReleased")
      .withArgs(1n, ETH, f.walletAddress, 2n * ONE, true);
    await expect(release).to.changeEtherBalances([f.wallet, f.ch], [0n, 0n]);
    expect((await f.ch.debtOf(1, ETH, f.walletAddress)).status).to.equal(DEBT.refunded);
    expect(await f.ch.heldLiquidity(ETH)).to.equal(0n);
    expect(await f.ch.payoutOf(ETH, f.walletAddress)).to.equal(2n * ONE);
    const pull = f.call(f.ch.interface.encodeFunctionData("withdrawPayout", [ETH, f.dave.address]));
    await expect(pull)
      .to.emit(f.ch, "PayoutWithdrawn")
      .withArgs(ETH, f.walletAddress, f.dave.address, 2n * ONE);
    await expect(pull).to.changeEtherBalance(f.dave, 2n * ONE);
  });

  it("one balance for every source: credits of several cycles and a double-listing refund are pulled at once", async () => {
    const f = await loadFixture(fixture);
    await f.vault.connect(f.alice).deposit({ value: 10n * ONE });
    for (const id of [1, 2]) {
      const cycle = buildCycle(id, transfer(ETH, f.alice.address, f.bob.address, BigInt(id) * ONE));
      await f.ch.connect(f.operator).commitCycle(
        id,
        {
          root: cycle.root,
          guaranteesRoot: GUARANTEES_ROOT,
          debitsRoot: cycle.debitsRoot,
        },
        cycle.totals,
        cycle.debtors,
        [],
      );
      await f.ch.connect(f.alice).payNetDebit(id, ETH, { value: BigInt(id) * ONE });
      await time.increase(W + 1);
      await f.ch.claimNetCredit(id, ETH, f.bob.address, ...cycle.claimOf(ETH, f.bob.address));
    }
    expect(await f.ch.payoutOf(ETH, f.bob.address)).to.equal(3n * ONE);
    const pull = f.ch.connect(f.bob).withdrawPayout(ETH, f.bob.address);
    await expect(pull)
      .to.emit(f.ch, "PayoutWithdrawn")
      .withArgs(ETH, f.bob.address, f.bob.address, 3n * ONE);
    await expect(pull).to.changeEtherBalance(f.bob, 3n * ONE);
  });

  it("withdrawPayout refuses the zero address and an empty payout", async () => {
    const f = await loadFixture(claimableFixture);
    await f.ch.claimNetCredit(1, ETH, f.bob.address, ...f.cycle.claimOf(ETH, f.bob.address));
    await expect(f.ch.connect(f.bob).withdrawPayout(ETH, ethers.ZeroAddress))
      .to.be.revertedWithCustomError(f.ch, "InvalidRecipient")
      .withArgs(ethers.ZeroAddress);
    await expect(f.ch.connect(f.bob).withdrawPayout(f.usdAddress, f.bob.address))
      .to.be.revertedWithCustomError(f.ch, "NoPayout")
      .withArgs(f.usdAddress, f.bob.address);
    await expect(f.ch.connect(f.alice).withdrawPayout(ETH, f.alice.address))
      .to.be.revertedWithCustomError(f.ch, "NoPayout")
      .withArgs(ETH, f.alice.address);
  });
});
