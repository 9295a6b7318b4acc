/**
 * A withdrawal against an open guarantee, end to end (docs/protocol.md, "Collateral and safety invariants", "Withdrawals";
 * test/e2e/protocol-fixtures.ts): Core's capacity drops as soon as its indexer sees the request, the
 * guarantee is committed long before the grace period ends, and the Vault pays only
 * `balance − obligations`; the creditor is still paid in full.
 */
import { expect } from "chai";
import {
  type ProtocolStack,
  cycleOf,
  expectBooksAgree,
  proofOf,
  startProtocolStack,
} from "./protocol-fixtures";

describe("protocol end to end: withdrawals never escape an obligation", function () {
  let s: ProtocolStack | undefined;
  afterEach(async () => {
    await s?.close();
    s = undefined;
  });

  it("d. capacity drops at the request, early finalization reverts, the Vault pays balance − obligations", async function () {
    s = await startProtocolStack();
    const { f, w } = s;
    const usd = f.usdAddress;
    const aliceWallet = await f.usd.balanceOf(w.alice.address);
    const bobWallet = await f.usd.balanceOf(w.bob.address);
    await f.vault.connect(w.alice).depositToken(usd, 1_000n);
    await s.round();
    const g = await s.settle("alice", "bob", 600n, usd);

    // alice asks for everything back while the guarantee is open.
    await f.vault.connect(w.alice).requestWithdrawal(usd, 1_000n);
    await s.round();
    expect(await s.balanceOf("alice", usd)).to.include({
      deposited: "1000",
      locked: "600",
      pending_withdrawal: "1000",
      available: "0",
    });
    // A new guarantee beyond what is left is refused, through the facilitator as by Core.
    const refused = await s.settleRaw(s.claimsFor("alice", "bob", 1n, usd));
    expect(refused.status).to.equal(400);
    expect(refused.body).to.include({ success: false, errorReason: "insufficient_collateral" });

    // The guarantee is committed at the next cutoff: its net debit becomes an on-chain obligation.
    await s.advance(f.timings.cycleLength);
    expect((await s.round()).scheduler).to.include({ action: "committed", cycleId: 1, guarantees: 1 });
    expect(await s.stateOf("alice", g.id)).to.equal("NETTED");
    expect(await f.vault.obligationOf(w.alice.address, usd)).to.equal(600n);

    // Core's view of the withdrawal: only what is free of the obligation.
    const view = await s.coreAs("alice", "GET", `/core/users/${w.alice.address}/withdrawals`);
    expect(view.status).to.equal(200);
    const row = view.body.withdrawable.find((b: { asset_address: string }) => b.asset_address === usd);
    expect(row).to.include({ free: "400", finalizable_amount: "400" });
    const [request] = view.body.withdrawals;
    expect(request).to.include({ amount: "1000", state: "PENDING", paid: null });
    const readyAt = Date.parse(request.finalizable_at) / 1000;
    expect(BigInt(readyAt)).to.equal(await f.vault.withdrawalFinalizableAt(w.alice.address, usd));

    // Before the grace period: reverts.
    await expect(f.vault.connect(w.alice).finalizeWithdrawal(usd)).to.be.revertedWithCustomError(
      f.vault,
      "WithdrawalNotReady",
    );
    // After it (alice has not paid and no keeper ran yet): the Vault pays balance − obligations = 400.
    await s.advance(readyAt - s.core.context.clock.nowSeconds());
    await expect(f.vault.connect(w.alice).finalizeWithdrawal(usd))
      .to.emit(f.vault, "WithdrawalFinalized")
      .withArgs(1, w.alice.address, usd, 1_000n, 400n);
    expect(await f.usd.balanceOf(w.alice.address)).to.equal(aliceWallet - 1_000n + 400n);
    expect(await f.vault.balanceOf(w.alice.address, usd)).to.equal(600n);
    // Core's next round: withdrawal FINALIZED; then the keeper (past the payment deadline) covers the debit.
    const { keeper } = await s.round();
    expect(keeper.covered.map((c) => c.debtor)).to.deep.equal([w.alice.address]);
    await s.round();
    const after = await s.coreAs("alice", "GET", `/core/users/${w.alice.address}/withdrawals`);
    expect(after.body.withdrawals[0]).to.include({ state: "FINALIZED", paid: "400" });
    expect(await s.stateOf("alice", g.id)).to.equal("DEFAULT_REMUNERATED");

    // Bob claims his 600 in full.
    const [position] = (await proofOf(s, 1, "bob")).positions;
    const [cycleId, asset, participant, credit, proof] = position.claim_net_credit_args!;
    await f.clearingHouse.connect(w.bob).claimNetCredit(cycleId, asset, participant, credit, proof);
    await f.clearingHouse.connect(w.bob).withdrawPayout(asset, w.bob.address); // pull payment
    await s.round();
    expect((await cycleOf(s, 1)).claims).to.have.length(1);

    // Chain and Core agree: alice kept 400 of her 1,000, bob received 600, the Vault and ClearingHouse are empty.
    expect(await f.usd.balanceOf(w.alice.address)).to.equal(aliceWallet - 600n);
    expect(await f.usd.balanceOf(w.bob.address)).to.equal(bobWallet + 600n);
    expect(await f.vault.balanceOf(w.alice.address, usd)).to.equal(0n);
    expect(await f.vault.obligationOf(w.alice.address, usd)).to.equal(0n);
    expect(await f.usd.balanceOf(f.vaultAddress)).to.equal(0n);
    // Only the operator bond is left: every credit was claimed and withdrawn.
    expect(await f.usd.balanceOf(f.clearingHouseAddress)).to.equal(await f.clearingHouse.bondOf(usd));
    await expectBooksAgree(s, "alice", usd, 0n);
    expect(await s.balanceOf("alice", usd)).to.include({
      deposited: "0",
      pending_withdrawal: "0",
      available: "0",
    });
  });
});
