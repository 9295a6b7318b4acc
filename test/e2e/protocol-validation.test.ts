/**
 * V2 guarantees end to end (docs/protocol.md, "Guarantee lifecycle", "V2 validation"; test/e2e/protocol-fixtures.ts): issued through the
 * facilitator, validated on the ValidationRegistry, remunerated on the Vault by the recipient with the
 * sdk's `toRemunerateArgs`, followed by Core through its indexer and V2 lifecycle.
 */
import { expect } from "chai";
import { keccak256, toUtf8Bytes } from "ethers";
import { remunerateCallArgs, toRemunerateArgs } from "../../sdk/certificate";
import type { GuaranteeClaimsV2 } from "../../sdk/claims";
import { validationRequestHash } from "../../sdk/ids";
import {
  CHAIN_ID,
  type Issued,
  type ProtocolStack,
  expectBooksAgree,
  mine,
  startProtocolStack,
} from "./protocol-fixtures";

describe("protocol end to end: V2 validation and remuneration", function () {
  let s: ProtocolStack | undefined;
  afterEach(async () => {
    await s?.close();
    s = undefined;
  });

  /** The recipient (bob) opens the validation request; the policy's validator answers `score`. */
  async function validate(stack: ProtocolStack, g: Issued, score: number): Promise<void> {
    const { policy } = g.claims as GuaranteeClaimsV2;
    // As an integrator would: the request hash from Core's guarantee view (the sdk derives the same).
    const view = await stack.coreAs("bob", "GET", `/core/guarantees/${g.id}`);
    const requestHash = view.body.validation_request_hash as string;
    expect(requestHash).to.equal(validationRequestHash(CHAIN_ID, policy, g.id));
    const registry = stack.f.validationRegistry;
    await registry
      .connect(stack.w.bob)
      .validationRequest(policy.validator, policy.agentId, "ipfs://job", requestHash);
    await registry
      .connect(stack.w.validator)
      .validationResponse(
        requestHash,
        score,
        "ipfs://verdict",
        keccak256(toUtf8Bytes(`verdict ${score}`)),
        policy.tag,
      );
  }

  it("c. a passing validation is remunerated on the Vault (REMUNERATED); a failing one reverts without payment (DISPUTED, then CANCELLED)", async function () {
    s = await startProtocolStack();
    const { f, w } = s;
    const usd = f.usdAddress;
    const bobBefore = await f.usd.balanceOf(w.bob.address);
    await f.vault.connect(w.alice).depositToken(usd, 1_000n);
    await s.round();
    const passing = await s.settle("alice", "bob", 400n, usd, { policy: {} });
    const failing = await s.settle("alice", "bob", 300n, usd, { policy: {}, x402Version: 1 });
    expect(await s.balanceOf("alice", usd)).to.include({ locked: "700", available: "300" });

    // Pass: score 90 ≥ 80. Bob remunerates with the certificate the facilitator handed him.
    await validate(s, passing, 90);
    const args = remunerateCallArgs(toRemunerateArgs(passing.certificate, passing.payer));
    await expect(f.vault.connect(w.bob).remunerate(...args))
      .to.emit(f.vault, "GuaranteeRemunerated")
      .withArgs(passing.id, w.alice.address, w.bob.address, usd, 400n);
    expect(await f.usd.balanceOf(w.bob.address)).to.equal(bobBefore + 400n);
    await s.round();
    expect(await s.stateOf("alice", passing.id)).to.equal("REMUNERATED");
    await expectBooksAgree(s, "alice", usd, 300n); // deposited 600, only the failing one still locked
    expect(await s.balanceOf("alice", usd)).to.include({ deposited: "600", available: "300" });
    // Paid once: a second remuneration is refused, and the scheduler never nets it.
    await expect(f.vault.connect(w.bob).remunerate(...args)).to.be.revertedWithCustomError(
      f.vault,
      "GuaranteeAlreadyConsumed",
    );

    // Fail: score 50 < 80. The Vault refuses to pay; Core disputes it.
    await validate(s, failing, 50);
    const refused = remunerateCallArgs(toRemunerateArgs(failing.certificate, failing.payer));
    await expect(f.vault.connect(w.bob).remunerate(...refused))
      .to.be.revertedWithCustomError(f.vault, "ValidationScoreTooLow")
      .withArgs(50, 80);
    expect(await f.usd.balanceOf(w.bob.address)).to.equal(bobBefore + 400n);
    const { lifecycle } = await s.round();
    expect(lifecycle.disputed).to.deep.equal([failing.id]);
    expect(await s.stateOf("alice", failing.id)).to.equal("DISPUTED");
    await expectBooksAgree(s, "alice", usd, 300n); // the payer may still finalize: the lock stays

    // Nobody finalizes; once the deadline has passed (and been indexed) Core cancels it and frees the lock.
    const { deadline } = (failing.claims as GuaranteeClaimsV2).policy;
    await s.advance(deadline - s.core.context.clock.nowSeconds() + 1);
    await mine(1);
    expect((await s.round()).lifecycle.cancelled).to.deep.equal([failing.id]);
    expect(await s.stateOf("alice", failing.id)).to.equal("CANCELLED");

    // Chain and Core agree: alice has 600 in the Vault, all of it available; nothing was netted.
    expect(await f.vault.balanceOf(w.alice.address, usd)).to.equal(600n);
    expect(await f.vault.obligationOf(w.alice.address, usd)).to.equal(0n);
    expect(await f.usd.balanceOf(f.vaultAddress)).to.equal(600n);
    await expectBooksAgree(s, "alice", usd, 0n);
    expect(await s.balanceOf("alice", usd)).to.include({ deposited: "600", available: "600" });
    expect(await f.clearingHouse.lastCycleId()).to.equal(0n);
  });
  it("c2. a validated V2 guarantee nobody remunerates is netted after its deadline, before the payer's withdrawal can finalize", async function () {
    s = await startProtocolStack();
    const { f, w } = s;
    const usd = f.usdAddress;
    await f.vault.connect(w.alice).depositToken(usd, 1_000n);
    await s.round();
    // The latest deadline Core accepts (docs/operator-async.md, V2 deadline cap): 178 s with the test
    // timings, counted from the chain's time as Core has indexed it.
    const t = f.timings;
    const latest =
      s.core.context.chainClock.nowSeconds() +
      t.withdrawalGracePeriod -
      t.cycleLength -
      t.commitDelay -
      t.confirmationLag -
      s.core.context.config.v2DeadlineMarginSeconds -
      1;
    const tooFar = await s.settleRaw(s.claimsFor("alice", "bob", 700n, usd, { deadline: latest + 1 }));
    expect(tooFar.status).to.equal(400);
    expect(tooFar.body.errorReason).to.equal("validation_deadline_too_far");
    const g = await s.settle("alice", "bob", 700n, usd, { policy: { deadline: latest } });
    await validate(s, g, 90);
    // The payer asks for everything back at once; the recipient never remunerates.
    await f.vault.connect(w.alice).requestWithdrawal(usd, 1_000n);
    const readyAt = Number(await f.vault.withdrawalFinalizableAt(w.alice.address, usd));

    // Core runs its rounds as time passes (every 10 s here): the guarantee is finalized at its deadline
    // and committed in the next cycle, so its obligation is on chain before the withdrawal is ready.
    let nettedAt: number | null = null;
    while (s.core.context.clock.nowSeconds() < readyAt) {
      await s.advance(10);
      await s.round();
      if (nettedAt === null && (await f.vault.obligationOf(w.alice.address, usd)) > 0n) {
        nettedAt = s.core.context.clock.nowSeconds();
      }
    }
    expect(nettedAt).to.not.equal(null);
    expect(nettedAt!).to.be.greaterThan(latest).and.lessThan(readyAt);
    // Core pinned the verdict it netted the guarantee on (audit H-2): a later response changes nothing.
    const requestHash = validationRequestHash(CHAIN_ID, (g.claims as GuaranteeClaimsV2).policy, g.id);
    expect(await f.vault.isVerdictPinned(requestHash)).to.equal(true);
    // The background work's checks behind health: the operator key certifies answers, no pin is stuck.
    const health = (await (await fetch(`${s.core.url}/core/health`)).json()) as { checks: object };
    expect(health.checks).to.include({ operator_key: "ok", verdict_pins: "ok" });
    // Where the cycle boundary falls (it depends on the chain's clock, hence on the tests run before)
    // decides whether the payment deadline has also passed by then: either the debt is still open
    // (NETTED, 700 reserved) or the keeper has already covered it from the collateral. Both keep the
    // creditor whole; either way the withdrawal can take only the 300 that back nothing.
    const state = await s.stateOf("alice", g.id);
    expect(state).to.be.oneOf(["NETTED", "DEFAULT_REMUNERATED"]);
    const stillOwed = state === "NETTED" ? 700n : 0n;
    const walletBefore = await f.usd.balanceOf(w.alice.address);
    await f.vault.connect(w.alice).finalizeWithdrawal(usd);
    expect((await f.usd.balanceOf(w.alice.address)) - walletBefore).to.equal(300n);
    expect(await f.vault.balanceOf(w.alice.address, usd)).to.equal(stillOwed);
    // Netted, so never remunerated too.
    const args = remunerateCallArgs(toRemunerateArgs(g.certificate, g.payer));
    await expect(f.vault.connect(w.bob).remunerate(...args)).to.be.revertedWithCustomError(
      f.vault,
      "GuaranteeAlreadyConsumed",
    );
    // That round may itself pass the payment deadline in chain time (the blocks above moved it): the
    // keeper then covers the debt from the 700 left.
    await s.round();
    const owedNow = (await s.stateOf("alice", g.id)) === "NETTED" ? stillOwed : 0n;
    await expectBooksAgree(s, "alice", usd, owedNow);
    expect(await s.balanceOf("alice", usd)).to.include({
      deposited: owedNow.toString(),
      pending_withdrawal: "0",
    });
  });
});
