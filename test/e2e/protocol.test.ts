/**
 * The protocol end to end, every component real (test/e2e/protocol-fixtures.ts): collateral deposited
 * on chain and picked up by Core's indexer, guarantees settled through the facilitator's `/settle`,
 * cycles committed by Core's scheduler on the ClearingHouse, debits paid or covered by the keeper,
 * credits claimed with the proofs Core serves. Each scenario ends by checking that the chain (Vault
 * balances and obligations, the participants' token and ETH balances) and Core's answers agree.
 */
import { expect } from "chai";
import { parseEther, ZeroAddress } from "ethers";
import { ethers } from "hardhat";
import { DEVNET_BOND_FLOOR_BPS } from "../../scripts/devnet/contracts";
import {
  type ProtocolStack,
  cycleOf,
  expectBooksAgree,
  gasCost,
  proofOf,
  startProtocolStack,
} from "./protocol-fixtures";

const ETH = ZeroAddress;

describe("protocol end to end: deposit → guarantees → cycle → payment or default → claims", function () {
  let s: ProtocolStack | undefined;
  afterEach(async () => {
    await s?.close();
    s = undefined;
  });

  it("a. V1 and V2 guarantees through the facilitator, a payer-finalized V2, a netted cycle paid and claimed: SETTLED", async function () {
    s = await startProtocolStack();
    const { f, w } = s;
    const usd = f.usdAddress;
    const walletBefore = {
      alice: await f.usd.balanceOf(w.alice.address),
      bob: await f.usd.balanceOf(w.bob.address),
      carol: await f.usd.balanceOf(w.carol.address),
    };
    await f.vault.connect(w.alice).depositToken(usd, 1_000n);
    await f.vault.connect(w.bob).depositToken(usd, 500n);
    expect((await s.round()).scheduler.action).to.equal("waiting"); // deposits indexed; first cutoff set
    expect(await s.balanceOf("alice", usd)).to.include({ deposited: "1000", locked: "0", available: "1000" });

    // alice → bob 300 (V1, x402 v1), alice → carol 200 (V2, x402 v2), bob → alice 100 (V1).
    const g1 = await s.settle("alice", "bob", 300n, usd, { x402Version: 1 });
    const g2 = await s.settle("alice", "carol", 200n, usd, { policy: {} });
    const g3 = await s.settle("bob", "alice", 100n, usd);
    expect(await s.stateOf("alice", g1.id)).to.equal("FINALIZED_PAYABLE");
    expect(await s.stateOf("alice", g2.id)).to.equal("PENDING_VALIDATION");
    expect(await s.balanceOf("alice", usd)).to.include({ locked: "500", available: "500" });
    expect(await s.balanceOf("bob", usd)).to.include({ locked: "100", available: "400" });

    // alice pays carol without waiting for validation.
    expect((await s.coreAs("carol", "POST", `/core/guarantees/${g2.id}/finalize`)).body.code).to.equal(
      "not_payer",
    );
    // alice's finalization is her EIP-712 signature of Finalization(g2): Core stores it, and an answer of a
    // dispute of g2 carries it on chain in place of a verdict (docs/clearing.md "Payer-finalized V2").
    const finalized = await s.finalize("alice", g2.id);
    expect(finalized.status).to.equal(200);
    expect(finalized.body.state).to.equal("FINALIZED_PAYABLE");
    // The recipient reads her signature with the guarantee: disputeCredit's `finalization` (docs/contracts.md).
    const seen = await s.coreAs("carol", "GET", `/core/guarantees/${g2.id}`);
    expect(seen.body.finalization_signature).to.match(/^0x[0-9a-f]{130}$/i);

    // The cutoff passes: the scheduler nets alice −400, bob +200, carol +200 and commits cycle 1.
    await s.advance(f.timings.cycleLength);
    expect((await s.round()).scheduler).to.include({ action: "committed", cycleId: 1, guarantees: 3 });
    expect(await f.clearingHouse.lastCycleId()).to.equal(1n);
    // With the bond floor on (as deployed on the devnet): Core checked its bond first, and it covered the cycle.
    expect(await f.clearingHouse.bondFloorBps()).to.equal(BigInt(DEVNET_BOND_FLOOR_BPS));
    expect(s.core.context.commitBond.status()).to.deep.include({
      state: "ok",
      floorBps: DEVNET_BOND_FLOOR_BPS,
      cycleId: 1,
    });
    expect(await f.vault.obligationOf(w.alice.address, usd)).to.equal(400n);
    expect(await s.stateOf("alice", g1.id)).to.equal("NETTED");
    expect(await s.stateOf("alice", g2.id)).to.equal("NETTED");
    expect(await s.stateOf("bob", g3.id)).to.equal("SETTLED"); // bob is a net creditor: nothing to pay
    // Each guarantee's view links to the cycle that netted it (where its payer's Merkle proof is).
    for (const g of [g1, g2]) {
      expect((await s.coreAs("alice", "GET", `/core/guarantees/${g.id}`)).body).to.include({
        cycle_id: 1,
        excluded_reason: null,
      });
    }
    await expectBooksAgree(s, "alice", usd, 400n); // the lock is now the net debit
    await expectBooksAgree(s, "bob", usd, 0n);
    const committed = await cycleOf(s, 1);
    expect(committed).to.include({ state: "COMMITTED", guarantee_count: 3 });
    expect(committed.debtors).to.deep.equal([
      { asset_address: usd, debtor: w.alice.address, amount: "400", status: "OPEN", covered: null },
    ]);

    // alice disputes three positions of her tree inside the window: her V1 guarantee to bob, her
    // payer-finalized V2 guarantee to carol (no verdict on chain: Core's answer carries her Finalization
    // signature) and one past the tree's end; Core's keeper answers the first two with her own signed
    // guarantees (the certificate's claims and her signatures it stored) and dismisses the third; the debit
    // stands.
    for (const position of [0, 1, 9])
      await f.clearingHouse.connect(w.alice).disputeGuarantee(1, usd, position);
    const answered = await s.round();
    expect(answered.keeper.answered.map((a) => [a.debtor, a.position])).to.deep.equal([
      [w.alice.address, 0],
      [w.alice.address, 1],
      [w.alice.address, 9],
    ]);
    for (const position of [0, 1])
      expect(await f.clearingHouse.disputeOf(1, usd, w.alice.address, position)).to.equal(2n); // Upheld
    await s.round();
    expect((await cycleOf(s, 1)).debtors[0]).to.include({ status: "ANSWERED" });

    // alice pays her net debit from her wallet; Core follows: SETTLED, lock released, cycle FINALIZED.
    const payment = await f.clearingHouse.connect(w.alice).payNetDebit(1, usd);
    await s.round();
    expect(await f.vault.obligationOf(w.alice.address, usd)).to.equal(0n);
    for (const g of [g1, g2]) expect(await s.stateOf("alice", g.id)).to.equal("SETTLED");
    expect((await cycleOf(s, 1)).state).to.equal("FINALIZED");

    // The creditors claim with the proofs Core serves, once the challenge window has closed.
    await s.advance(f.timings.challengeWindow + 1);
    const claimTx: Record<string, string> = {};
    for (const creditor of ["bob", "carol"] as const) {
      const [position] = (await proofOf(s, 1, creditor)).positions;
      expect(position).to.include({ asset_address: usd, debit: "0", credit: "200", claimed: false });
      const [cycleId, asset, participant, credit, proof] = position.claim_net_credit_args!;
      const claim = await f.clearingHouse
        .connect(w[creditor])
        .claimNetCredit(cycleId, asset, participant, credit, proof);
      claimTx[creditor] = claim.hash;
      // Pull payment: the claim sets the credit aside; the creditor withdraws it to its wallet.
      await f.clearingHouse.connect(w[creditor]).withdrawPayout(asset, participant);
    }
    const [alicePosition] = (await proofOf(s, 1, "alice")).positions;
    expect(alicePosition).to.include({ debit: "400", credit: "0", claim_net_credit_args: null });
    await s.round();
    expect((await proofOf(s, 1, "bob")).positions[0].claimed).to.equal(true);
    expect((await cycleOf(s, 1)).claims).to.have.deep.members([
      { asset_address: usd, participant: w.bob.address, amount: "200" },
      { asset_address: usd, participant: w.carol.address, amount: "200" },
    ]);

    // Chain and Core agree to the unit.
    expect(await f.usd.balanceOf(w.alice.address)).to.equal(walletBefore.alice - 1_000n - 400n);
    expect(await f.usd.balanceOf(w.bob.address)).to.equal(walletBefore.bob - 500n + 200n);
    expect(await f.usd.balanceOf(w.carol.address)).to.equal(walletBefore.carol + 200n);
    expect(await f.usd.balanceOf(f.vaultAddress)).to.equal(1_500n); // = the users' Vault balances
    expect(await f.usd.balanceOf(f.clearingHouseAddress)).to.equal(await f.clearingHouse.bondOf(usd)); // claimed, withdrawn: the bond is left
    await expectBooksAgree(s, "alice", usd, 0n);
    await expectBooksAgree(s, "bob", usd, 0n);
    expect(await s.balanceOf("alice", usd)).to.include({ deposited: "1000", available: "1000" });
    for (const g of [g1, g2]) expect(await s.stateOf("alice", g.id)).to.equal("SETTLED");
    expect(await s.stateOf("bob", g3.id)).to.equal("SETTLED");

    // Each guarantee's timeline names the transactions that moved it (GET /core/guarantees/{id}/timeline).
    const steps = async (who: "alice" | "bob" | "carol", id: string) => {
      const answer = await s!.coreAs(who, "GET", `/core/guarantees/${id}/timeline`);
      expect(answer.status, JSON.stringify(answer.body)).to.equal(200);
      return (answer.body.timeline as { kind: string; tx_hash: string | null }[]).map((step) => [
        step.kind,
        step.tx_hash,
      ]);
    };
    for (const [g, recipient] of [
      [g1, "bob"],
      [g2, "carol"],
    ] as const) {
      expect(await steps(recipient, g.id)).to.deep.equal([
        ["issued", null],
        ["netted", committed.commit_tx],
        ["debt_paid", payment.hash],
        ["credit_claimed", claimTx[recipient]],
        ["cycle_finalized", null],
        ["state", null],
      ]);
    }
    // bob's purchase from alice: bob is a net creditor (no debit to pay) and alice claims nothing.
    expect(await steps("bob", g3.id)).to.deep.equal([
      ["issued", null],
      ["netted", committed.commit_tx],
      ["cycle_finalized", null],
      ["state", null],
    ]);
  });

  it("b. a debtor who does not pay is covered from collateral after the deadline; the creditor is paid in full: DEFAULT_REMUNERATED", async function () {
    s = await startProtocolStack();
    const { f, w } = s;
    await f.vault.connect(w.alice).deposit({ value: parseEther("1") });
    await s.round();
    const g = await s.settle("alice", "bob", parseEther("0.3"), ETH);
    expect(await s.balanceOf("alice", ETH)).to.include({
      deposited: parseEther("1").toString(),
      locked: parseEther("0.3").toString(),
    });

    await s.advance(f.timings.cycleLength);
    expect((await s.round()).scheduler).to.include({ action: "committed", cycleId: 1 });
    expect(await s.stateOf("alice", g.id)).to.equal("NETTED");
    expect(await f.vault.obligationOf(w.alice.address, ETH)).to.equal(parseEther("0.3"));

    // Before the payment deadline the keeper leaves the debt alone (alice could still pay).
    expect((await s.round()).keeper.covered).to.deep.equal([]);
    // Bob cannot be paid yet: the challenge window is open, and after it nothing funds the cycle.
    const [position] = (await proofOf(s, 1, "bob")).positions;
    const [cycleId, asset, participant, credit, proof] = position.claim_net_credit_args!;
    await expect(
      f.clearingHouse.connect(w.bob).claimNetCredit(cycleId, asset, participant, credit, proof),
    ).to.be.revertedWithCustomError(f.clearingHouse, "ChallengeWindowOpen");
    await s.advance(f.timings.challengeWindow + 1);
    await expect(
      f.clearingHouse.connect(w.bob).claimNetCredit(cycleId, asset, participant, credit, proof),
    ).to.be.revertedWithCustomError(f.clearingHouse, "CreditNotYetFunded");

    // alice never pays. Past the payment deadline the keeper covers the debit from her collateral.
    await s.advance(f.timings.challengeWindow + f.timings.paymentWindow + 1);
    const { keeper } = await s.round();
    expect(keeper.covered.map((c) => c.debtor)).to.deep.equal([w.alice.address]);
    expect(await s.stateOf("alice", g.id)).to.equal("DEFAULT_REMUNERATED");
    const cycle = await cycleOf(s, 1);
    expect(cycle.state).to.equal("FINALIZED");
    expect(cycle.debtors[0]).to.include({ status: "COVERED", covered: parseEther("0.3").toString() });
    expect((await s.round()).keeper.covered).to.deep.equal([]); // not covered twice

    // Bob claims in full.
    const bobBefore = await ethers.provider.getBalance(w.bob.address);
    const fee =
      (await gasCost(
        await f.clearingHouse.connect(w.bob).claimNetCredit(cycleId, asset, participant, credit, proof),
      )) + (await gasCost(await f.clearingHouse.connect(w.bob).withdrawPayout(ETH, w.bob.address)));
    expect(await ethers.provider.getBalance(w.bob.address)).to.equal(bobBefore + parseEther("0.3") - fee);
    await s.round();

    // Chain and Core agree: alice keeps 0.7 ETH in the Vault, nothing locked, nothing owed.
    expect(await f.vault.balanceOf(w.alice.address, ETH)).to.equal(parseEther("0.7"));
    expect(await f.vault.obligationOf(w.alice.address, ETH)).to.equal(0n);
    await expectBooksAgree(s, "alice", ETH, 0n);
    expect(await s.balanceOf("alice", ETH)).to.include({ available: parseEther("0.7").toString() });
    expect(await ethers.provider.getBalance(f.vaultAddress)).to.equal(parseEther("0.7"));
    expect(await ethers.provider.getBalance(f.clearingHouseAddress)).to.equal(
      await f.clearingHouse.bondOf(ETH),
    );
    expect((await cycleOf(s, 1)).claims).to.deep.equal([
      { asset_address: ETH, participant: w.bob.address, amount: parseEther("0.3").toString() },
    ]);
  });
});
