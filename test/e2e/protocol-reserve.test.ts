/**
 * Sellers' on-chain reserves in Core's books, end to end (docs/operator-async.md, "Sellers' reserves";
 * test/e2e/protocol-fixtures.ts): Core indexes ReserveRegistered / ReserveReleased and counts a reserve
 * as held collateral once its guarantee is no longer locked in Core, so that issuance, the balances view
 * and the withdrawal view agree with the Vault's `freeCollateralOf`.
 */
import { network } from "hardhat";
import { time } from "@nomicfoundation/hardhat-network-helpers";
import { expect } from "chai";
import { keccak256, parseEther, toUtf8Bytes, ZeroAddress } from "ethers";
import { remunerateCallArgs, toRemunerateArgs } from "../../sdk/certificate";
import type { GuaranteeClaimsV2 } from "../../sdk/claims";
import { validationRequestHash } from "../../sdk/ids";
import {
  CHAIN_ID,
  type Issued,
  type Participant,
  type ProtocolStack,
  mine,
  startProtocolStack,
} from "./protocol-fixtures";

const ETH = ZeroAddress;
const eth = (value: string) => parseEther(value).toString();

describe("protocol end to end: sellers' on-chain reserves in Core's capacity and views", function () {
  let s: ProtocolStack | undefined;
  afterEach(async () => {
    await s?.close();
    s = undefined;
  });

  const argsOf = (g: Issued) => remunerateCallArgs(toRemunerateArgs(g.certificate, g.payer));

  async function register(stack: ProtocolStack, g: Issued): Promise<void> {
    await expect(stack.f.vault.connect(stack.w.bob).registerReserve(...argsOf(g))).to.emit(
      stack.f.vault,
      "ReserveRegistered",
    );
  }

  async function pass(stack: ProtocolStack, g: Issued): Promise<void> {
    const { policy } = g.claims as GuaranteeClaimsV2;
    const requestHash = validationRequestHash(CHAIN_ID, policy, g.id);
    const registry = stack.f.validationRegistry;
    await registry
      .connect(stack.w.bob)
      .validationRequest(policy.validator, policy.agentId, "ipfs://job", requestHash);
    await registry
      .connect(stack.w.validator)
      .validationResponse(requestHash, 90, "ipfs://verdict", keccak256(toUtf8Bytes("ok")), policy.tag);
  }

  /** The withdrawal view's row of ETH. */
  async function withdrawable(stack: ProtocolStack, who: Participant) {
    const view = await stack.coreAs(who, "GET", `/core/users/${stack.w[who].address}/withdrawals`);
    expect(view.status).to.equal(200);
    return (view.body.withdrawable as Record<string, string | null>[]).find((b) => b.asset_address === ETH)!;
  }

  /** Core's `free` is the Vault's free collateral, and `available` is the same at factor 100 %. */
  async function expectFreeMatchesChain(stack: ProtocolStack, who: Participant, free: string) {
    expect(await stack.f.vault.freeCollateralOf(stack.w[who].address, ETH)).to.equal(BigInt(free));
    expect(await withdrawable(stack, who)).to.include({ free });
    expect(await stack.balanceOf(who, ETH)).to.include({ available: free });
  }

  async function expectRefused(stack: ProtocolStack, amount: bigint) {
    const refused = await stack.settleRaw(stack.claimsFor("alice", "carol", amount, ETH));
    expect(refused.status).to.equal(400);
    expect(refused.body).to.include({ success: false, errorReason: "insufficient_collateral" });
  }

  it("the integrator's case: a reserve of a cancelled guarantee holds 0.03 of 0.1 until it expires, then the keeper releases it", async function () {
    s = await startProtocolStack();
    const { f, w } = s;
    await f.vault.connect(w.alice).deposit({ value: parseEther("0.1") });
    await s.round();
    const g = await s.settle("alice", "bob", parseEther("0.03"), ETH, { policy: {} });
    await register(s, g);
    await s.round();

    // Pending: Core's lock and the reserve are the same 0.03, counted once.
    expect(await s.balanceOf("alice", ETH)).to.include({
      locked: eth("0.03"),
      reserve_hold: "0",
      available: eth("0.07"),
    });
    await expectFreeMatchesChain(s, "alice", eth("0.07"));

    // Validation fails (no passing response by the deadline): Core cancels and releases its lock, the
    // Vault still holds the reserve.
    const { deadline } = (g.claims as GuaranteeClaimsV2).policy;
    await s.advance(deadline + 1 - s.core.context.clock.nowSeconds());
    expect((await s.round()).lifecycle.cancelled).to.deep.equal([g.id]);
    expect(await s.balanceOf("alice", ETH)).to.include({
      deposited: eth("0.1"),
      locked: "0",
      reserve_hold: eth("0.03"),
      available: eth("0.07"),
    });
    await expectFreeMatchesChain(s, "alice", eth("0.07"));
    // No certificate over what the Vault holds back.
    await expectRefused(s, parseEther("0.07") + 1n);

    // A withdrawal of everything: Core's finalizable amount is what the Vault would pay.
    await f.vault.connect(w.alice).requestWithdrawal(ETH, parseEther("0.1"));
    await s.round();
    expect(await withdrawable(s, "alice")).to.include({
      deposited: eth("0.1"),
      locked: "0",
      reserve_hold: eth("0.03"),
      free: eth("0.07"),
      finalizable_amount: eth("0.07"),
    });
    expect(await s.balanceOf("alice", ETH)).to.include({ available: "0" });

    // The reserve expires (deadline + withdrawal grace, chain time): Core's keeper releases it in its next
    // round, not a second earlier (the Vault would refuse: ReserveStillActive).
    const reserve = await f.vault.reserveOf(g.id);
    await s.advance(Number(reserve.expiresAt) - 1 - s.core.context.chainClock.nowSeconds());
    expect((await s.round()).keeper.reservesReleased).to.deep.equal([]);
    expect(await withdrawable(s, "alice")).to.include({ reserve_hold: eth("0.03"), free: eth("0.07") });
    await s.advance(1);
    const { keeper } = await s.round();
    expect(keeper.reservesReleased.map((r) => [r.guaranteeId, r.user])).to.deep.equal([
      [g.id, w.alice.address],
    ]);
    const receipt = await f.vault.runner!.provider!.getTransactionReceipt(keeper.reservesReleased[0].txHash);
    const released = receipt!.logs
      .map((l) => f.vault.interface.parseLog(l))
      .find((e) => e?.name === "ReserveReleased");
    expect([...released!.args]).to.deep.equal([g.id, w.alice.address, ETH, parseEther("0.03")]);
    expect(await f.vault.freeCollateralOf(w.alice.address, ETH)).to.equal(parseEther("0.1"));
    expect(await withdrawable(s, "alice")).to.include({
      reserve_hold: "0",
      free: eth("0.1"),
      finalizable_amount: eth("0.1"),
    });
  });

  it("a remuneration out of the reserve is accounted once; one paid from free collateral leaves the reserve, which the keeper releases", async function () {
    s = await startProtocolStack();
    const { f, w } = s;
    await f.vault.connect(w.alice).deposit({ value: parseEther("0.1") });
    await s.round();
    const a = await s.settle("alice", "bob", parseEther("0.03"), ETH, { policy: {} });
    const b = await s.settle("alice", "bob", parseEther("0.07"), ETH, { policy: {} });
    await register(s, a);
    await register(s, b);
    await pass(s, a);
    await s.round();
    await expectFreeMatchesChain(s, "alice", "0");

    // Nothing free: the Vault pays a out of its own reserve (ReserveReleased, then GuaranteeRemunerated).
    await expect(f.vault.connect(w.bob).remunerate(...argsOf(a)))
      .to.emit(f.vault, "ReserveReleased")
      .withArgs(a.id, w.alice.address, ETH, parseEther("0.03"));
    await s.round();
    expect(await s.stateOf("alice", a.id)).to.equal("REMUNERATED");
    expect(await s.balanceOf("alice", ETH)).to.include({
      deposited: eth("0.07"),
      locked: eth("0.07"),
      reserve_hold: "0",
      available: "0",
    });
    await expectFreeMatchesChain(s, "alice", "0");

    // b is paid from free collateral after a top-up: its reserve stays on chain until released, and Core's
    // keeper releases it (consumed: anyone may) in the round that indexes the remuneration.
    await f.vault.connect(w.alice).deposit({ value: parseEther("0.1") });
    await pass(s, b);
    await f.vault.connect(w.bob).remunerate(...argsOf(b));
    expect(await f.vault.freeCollateralOf(w.alice.address, ETH)).to.equal(parseEther("0.03"));
    const { keeper } = await s.round();
    expect(keeper.reservesReleased.map((r) => r.guaranteeId)).to.deep.equal([b.id]);
    expect(await s.stateOf("alice", b.id)).to.equal("REMUNERATED");
    expect(await s.balanceOf("alice", ETH)).to.include({
      deposited: eth("0.1"),
      locked: "0",
      reserve_hold: "0",
    });
    await expectFreeMatchesChain(s, "alice", eth("0.1"));
    expect((await s.round()).keeper.reservesReleased).to.deep.equal([]);
  });

  it("the keeper releases the reserve of a guarantee netted in a cycle (chain time), once", async function () {
    s = await startProtocolStack();
    const { f, w } = s;
    await f.vault.connect(w.alice).deposit({ value: parseEther("0.1") });
    await s.round();
    const g = await s.settle("alice", "bob", parseEther("0.03"), ETH, { policy: {} });
    await register(s, g);
    await pass(s, g);
    // Nobody remunerates: Core finalizes it at its deadline and nets it in the next cycle (markNetted), after
    // which the Vault no longer needs the reserve.
    const released: string[] = [];
    for (let i = 0; i < 60 && released.length === 0; i++) {
      await s.advance(10);
      const { keeper } = await s.round();
      released.push(...keeper.reservesReleased.map((r) => r.guaranteeId));
    }
    expect(released).to.deep.equal([g.id]);
    expect(await f.vault.consumption(g.id)).to.equal(2n); // Netted
    expect((await f.vault.reserveOf(g.id)).user).to.equal(ZeroAddress);
    expect(await s.stateOf("alice", g.id)).to.be.oneOf(["NETTED", "DEFAULT_REMUNERATED", "SETTLED"]);
    expect(await s.balanceOf("alice", ETH)).to.include({ reserve_hold: "0" });
    expect((await s.round()).keeper.reservesReleased).to.deep.equal([]);
  });

  it("a reorg that removes the registration rolls the reserve back", async function () {
    s = await startProtocolStack();
    const { f, w } = s;
    await f.vault.connect(w.alice).deposit({ value: parseEther("0.1") });
    await s.round();
    // Core's clock on the chain's latest block (the deposit's), so the deadline's 5 s margin below is
    // counted from the chain's own time whatever offset earlier tests left on the in-process chain.
    await s.syncClocks();
    const g = await s.settle("alice", "bob", parseEther("0.03"), ETH, { policy: {} });
    const { deadline } = (g.claims as GuaranteeClaimsV2).policy;
    // Measured from the chain's head, not Core's clock: Core's clock trails the head by the confirmation
    // depth, and the registration below must be mined before the deadline.
    await s.advance(deadline - 5 - (await time.latest()));
    await s.round();

    const snapshot = (await network.provider.send("evm_snapshot", [])) as string;
    await register(s, g);
    await s.advance(10); // past the deadline: Core cancels, the reserve now counts
    expect((await s.round()).lifecycle.cancelled).to.deep.equal([g.id]);
    expect(await s.balanceOf("alice", ETH)).to.include({ reserve_hold: eth("0.03"), available: eth("0.07") });

    // The blocks with the registration are replaced by a longer branch without it.
    await network.provider.send("evm_revert", [snapshot]);
    await mine(4);
    await s.round();
    expect(await f.vault.freeCollateralOf(w.alice.address, ETH)).to.equal(parseEther("0.1"));
    expect(await s.balanceOf("alice", ETH)).to.include({ reserve_hold: "0", available: eth("0.1") });
    await expectFreeMatchesChain(s, "alice", eth("0.1"));
  });
});
