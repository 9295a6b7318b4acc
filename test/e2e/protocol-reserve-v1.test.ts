/**
 * A seller's V1 reserve in Core's clearing, end to end (docs/contracts.md, "Seller's V1 reserve";
 * docs/clearing.md, "Reserved V1 ids"; test/e2e/protocol-fixtures.ts): Core indexes V1ReserveRegistered,
 * nets the reserved V1 id (not listed in its commit's nettedV2Ids since the issue 25 residuals), and its
 * keeper then releases the reserve with the credit proof, which marks it netted. The seller is paid once, through clearing: the reserve can never be collected.
 */
import { time } from "@nomicfoundation/hardhat-network-helpers";
import { expect } from "chai";
import { parseEther, ZeroAddress } from "ethers";
import { remunerateCallArgs, toRemunerateArgs } from "../../sdk/certificate";
import { type Issued, type ProtocolStack, startProtocolStack } from "./protocol-fixtures";

const ETH = ZeroAddress;
const NETTED = 2n;

describe("protocol end to end: a seller's V1 reserve is marked netted by Core's commit", function () {
  let s: ProtocolStack | undefined;
  afterEach(async () => {
    await s?.close();
    s = undefined;
  });

  const argsOf = (g: Issued) => remunerateCallArgs(toRemunerateArgs(g.certificate, g.payer));

  it("a reserved V1 guarantee is netted (not listed by the commit), the keeper releases the reserve, and it cannot be collected", async function () {
    s = await startProtocolStack();
    const { f, w } = s;
    await f.vault.connect(w.alice).deposit({ value: parseEther("0.1") });
    await s.round();
    const g = await s.settle("alice", "bob", parseEther("0.03"), ETH);
    const other = await s.settle("alice", "bob", parseEther("0.01"), ETH);
    await expect(f.vault.connect(w.bob).registerReserve(...argsOf(g))).to.emit(
      f.vault,
      "V1ReserveRegistered",
    );
    expect(await f.vault.v1ReserveRecipient(g.id)).to.equal(w.bob.address);
    await s.round();
    // Core holds it as a V1 reserve: never released as expired.
    expect(await s.core.context.store.reserves.listV1ReserveIds()).to.deep.equal([g.id.toLowerCase()]);

    const released: string[] = [];
    for (let i = 0; i < 60 && released.length === 0; i++) {
      await s.advance(10);
      const { keeper } = await s.round();
      released.push(...keeper.reservesReleased.map((r) => r.guaranteeId));
    }
    expect(released).to.deep.equal([g.id]);
    // The release marked the reserved V1 id netted (no V1 id is listed by the commit: no gas for nothing).
    expect(await f.vault.consumption(g.id)).to.equal(NETTED);
    expect(await f.vault.consumption(other.id)).to.equal(0n);
    expect((await f.vault.reserveOf(g.id)).user).to.equal(ZeroAddress);
    expect(await f.vault.v1ReserveRecipient(g.id)).to.equal(ZeroAddress);
    expect(await s.stateOf("alice", g.id)).to.be.oneOf(["NETTED", "DEFAULT_REMUNERATED", "SETTLED"]);
    expect(await s.core.context.store.reserves.listV1ReserveIds()).to.deep.equal([]);

    // The seller is paid through clearing: its credit in the cycle counts the reserved guarantee once.
    const store = s.core.context.store;
    const cycleId = (await store.guarantees.getClearingGuarantee(g.id))!.cycleId!;
    const sameCycle = (await store.guarantees.getClearingGuarantee(other.id))!.cycleId === cycleId;
    const proof = await s.coreAs("bob", "GET", `/core/cycles/${cycleId}/participants/${w.bob.address}/proof`);
    expect(proof.status).to.equal(200);
    const positions = proof.body.positions as { asset_address: string; credit: string }[];
    expect(positions.find((p) => p.asset_address === ETH)?.credit).to.equal(
      (parseEther("0.03") + (sameCycle ? parseEther("0.01") : 0n)).toString(),
    );

    // Past its collectableAt the seller cannot collect it: it was paid through clearing.
    await s.advance(3600 * 24 * 30);
    await expect(f.vault.connect(w.bob).collectReserve(g.id)).to.be.revertedWithCustomError(
      f.vault,
      "ReserveNotFound",
    );
    expect((await s.round()).keeper.reservesReleased).to.deep.equal([]);
  });

  it("the race: a V1 reserve registered after the commit netted its guarantee unmarked is released by the keeper's releaseListedReserve once the cycle is settled, before collectableAt", async function () {
    s = await startProtocolStack();
    const { f, w } = s;
    await f.vault.connect(w.alice).deposit({ value: parseEther("0.1") });
    await s.round();
    const g = await s.settle("alice", "bob", parseEther("0.03"), ETH);
    // Core nets and commits the cycle before any reserve exists: the V1 id is not marked. Chain time moves a
    // second per round: the registration below must still come before registerBy, however many rounds a
    // loaded machine needs between the cutoff and the indexed commit (5 s steps overshot it under load).
    for (let i = 0; i < 300 && (await s.stateOf("alice", g.id)) !== "NETTED"; i++) {
      await s.advance(1);
      await s.round();
    }
    expect(await s.stateOf("alice", g.id)).to.equal("NETTED");
    expect(await f.vault.consumption(g.id)).to.equal(0n);

    // The seller registers now (still before registerBy): the same state as a registration mined between
    // Core's planning and its commit.
    await expect(f.vault.connect(w.bob).registerReserve(...argsOf(g))).to.emit(
      f.vault,
      "V1ReserveRegistered",
    );
    const { expiresAt: collectableAt } = await f.vault.reserveOf(g.id);
    const released: { guaranteeId: string; txHash: string }[] = [];
    for (let i = 0; i < 200 && released.length === 0; i++) {
      await s.advance(10);
      const { keeper } = await s.round();
      released.push(...keeper.reservesReleased);
    }
    expect(released.map((r) => r.guaranteeId)).to.deep.equal([g.id]);
    const tx = await f.vault.runner!.provider!.getTransaction(released[0].txHash);
    expect(f.vault.interface.parseTransaction(tx!)?.name).to.equal("releaseListedReserve");
    expect(BigInt(await time.latest())).to.be.lessThan(collectableAt);
    expect(await f.vault.consumption(g.id)).to.equal(NETTED);
    expect((await f.vault.reserveOf(g.id)).user).to.equal(ZeroAddress);
    await s.advance(Number(collectableAt) - (await time.latest()) + 1);
    await expect(f.vault.connect(w.bob).collectReserve(g.id)).to.be.revertedWithCustomError(
      f.vault,
      "ReserveNotFound",
    );
    await s.round();
    expect(await s.core.context.store.reserves.listV1ReserveIds()).to.deep.equal([]);
  });
});
