import { loadFixture, time } from "@nomicfoundation/hardhat-network-helpers";
import { expect } from "chai";
import { ethers } from "hardhat";
import { parseEther } from "ethers";

import { ReentrantReceiver__factory } from "../../typechain-types";
import { ETH, GUARANTEES_ROOT, TIMINGS, buildCycle, suretyFixture, transfer } from "./helpers";

const ONE = parseEther("1");

describe("Re-entry is refused", () => {
  async function fixture() {
    const f = await suretyFixture();
    const receiver = await new ReentrantReceiver__factory(f.admin).deploy();
    const receiverAddress = await receiver.getAddress();
    const guardError = f.vault.interface.getError("ReentrancyGuardReentrantCall")!.selector;
    return { ...f, receiver, receiverAddress, guardError };
  }

  it("Vault: a withdrawal recipient cannot call back into the Vault while being paid", async () => {
    const { vault, vaultAddress, receiver, guardError } = await loadFixture(fixture);
    const v = vault.interface;
    await receiver.execute(vaultAddress, ONE, v.encodeFunctionData("deposit"), { value: ONE });
    await receiver.execute(vaultAddress, 0, v.encodeFunctionData("requestWithdrawal", [ETH, ONE]));
    await time.increase(TIMINGS.withdrawalGracePeriod);
    await receiver.arm(vaultAddress, v.encodeFunctionData("deposit"));
    await receiver.execute(vaultAddress, 0, v.encodeFunctionData("finalizeWithdrawal", [ETH]));
    expect(await receiver.reentered()).to.equal(true);
    expect(await receiver.reentrySucceeded()).to.equal(false);
    expect(await receiver.reentryRevertData()).to.equal(guardError);
  });

  it("ClearingHouse: a creditor cannot pull its payout twice from inside its payment", async () => {
    const { clearingHouse, clearingHouseAddress, operator, alice, receiver, receiverAddress, guardError } =
      await loadFixture(fixture);
    const c = buildCycle(1, transfer(ETH, alice.address, receiverAddress, ONE));
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
    await time.increase(TIMINGS.challengeWindow + 1);
    // The claim sends nothing (pull payment); the payout is sent by withdrawPayout, which is guarded.
    await expect(clearingHouse.claimNetCredit(1, ETH, receiverAddress, ...c.claimOf(ETH, receiverAddress)))
      .to.emit(clearingHouse, "NetCreditClaimed")
      .withArgs(1n, ETH, receiverAddress, ONE);
    expect(await receiver.reentered()).to.equal(false);
    const pull = clearingHouse.interface.encodeFunctionData("withdrawPayout", [ETH, receiverAddress]);
    await receiver.arm(clearingHouseAddress, pull);
    await expect(receiver.execute(clearingHouseAddress, 0, pull))
      .to.emit(clearingHouse, "PayoutWithdrawn")
      .withArgs(ETH, receiverAddress, receiverAddress, ONE);
    expect(await receiver.reentered()).to.equal(true);
    expect(await receiver.reentrySucceeded()).to.equal(false);
    expect(await receiver.reentryRevertData()).to.equal(guardError);
    expect(await ethers.provider.getBalance(receiverAddress)).to.equal(ONE);
    expect(await clearingHouse.payoutOf(ETH, receiverAddress)).to.equal(0n);
  });
});
