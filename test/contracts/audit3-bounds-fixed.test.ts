/**
 * Third outside audit (docs/audit3-findings.md), A3-I1 fixed, and the spare-bond product the lead found:
 *
 *  A3-I1  `commitCycle` lists at most `MAX_ASSETS_PER_COMMIT` = 16 assets (`CommitTooManyAssets`): with the
 *         debtor bound, the worst commit (200 fresh debtors over 16 assets, after 8 earlier 16-asset cycles it
 *         releases from `bondAtRisk`) fits EIP-7825's 2^24 gas; the audit's 40 assets revert.
 *  spare  `ClearingBooks.spareBond` takes the floor's share as a full-precision product (`Math.mulDiv`, rounded
 *         up): a `bondAtRisk` whose product with `bondFloorBps` exceeds 2^256 makes nothing spare instead of
 *         reverting every owed payment with an arithmetic panic. Each debit fits 128 bits (the Vault's
 *         obligations), so reaching such a sum takes ~2^107 commits at risk: the test writes the slot directly.
 */
import { loadFixture, time } from "@nomicfoundation/hardhat-network-helpers";
import { expect } from "chai";
import { AbiCoder, getAddress, keccak256, parseEther, toBeHex, toUtf8Bytes, zeroPadValue } from "ethers";
import { ethers } from "hardhat";

import { guaranteeLeafOf } from "../../operator/clearing/commit-plan";
import { guaranteeProof } from "../../sdk";

import {
  ETH,
  GUARANTEES_ROOT,
  buildCycle,
  commitPlanned,
  creditProofOf,
  signedGuarantee,
  suretyFixture,
} from "./helpers";

const ONE = parseEther("1");
const TX_GAS_CAP = 2n ** 24n;

const fresh = (label: string): string => getAddress("0x" + keccak256(toUtf8Bytes(label)).slice(26));

/** `debtors` fresh debtors (`label` i) of 1,000 wei each, round-robin over `assets`, each asset owed to `creditor`. */
function wideCycle(cycleId: bigint, debtors: number, creditor: string, assets: string[], label: string) {
  const positions: { asset: string; participant: string; debit: bigint; credit: bigint }[] = [];
  for (let i = 0; i < debtors; i++) {
    positions.push({
      asset: assets[i % assets.length],
      participant: fresh(`${label} ${i}`),
      debit: 1000n,
      credit: 0n,
    });
  }
  for (const asset of assets) {
    const credit = positions.filter((p) => p.asset === asset).reduce((sum, p) => sum + p.debit, 0n);
    if (credit > 0n) positions.push({ asset, participant: creditor, debit: 0n, credit });
  }
  const c = buildCycle(cycleId, positions);
  return { ...c, roots: { root: c.root, guaranteesRoot: GUARANTEES_ROOT, debitsRoot: c.debitsRoot } };
}

const assetsOf = (count: number) => [
  ETH,
  ...Array.from({ length: count - 1 }, (_, i) => fresh(`audit3 asset ${i}`)),
];

describe("audit3 A3-I1 fixed: a commit lists at most MAX_ASSETS_PER_COMMIT assets", () => {
  it("17 assets (and the audit's 40) revert CommitTooManyAssets; 16 commit", async () => {
    const f = await loadFixture(suretyFixture);
    const ch = f.clearingHouse.connect(f.operator);
    const maxAssets = Number(await ch.MAX_ASSETS_PER_COMMIT());
    expect(maxAssets).to.equal(16);
    for (const count of [maxAssets + 1, 40]) {
      const c = wideCycle(1n, count, f.bob.address, assetsOf(count), "few");
      await expect(ch.commitCycle(1n, c.roots, c.totals, c.debtors, []))
        .to.be.revertedWithCustomError(ch, "CommitTooManyAssets")
        .withArgs(count);
    }
    const ok = wideCycle(1n, maxAssets, f.bob.address, assetsOf(maxAssets), "few");
    await expect(ch.commitCycle(1n, ok.roots, ok.totals, ok.debtors, [])).to.emit(ch, "CycleCommitted");
  });

  it("the worst commit at both bounds, releasing 8 earlier 16-asset cycles, fits 2^24 gas (measured)", async () => {
    const f = await loadFixture(suretyFixture);
    const ch = f.clearingHouse.connect(f.operator);
    const maxDebtors = Number(await ch.MAX_DEBTORS_PER_COMMIT());
    const maxAssets = Number(await ch.MAX_ASSETS_PER_COMMIT());
    const assets = assetsOf(maxAssets);
    // Eight cycles over the same 16 assets, each vetoed (a cycle leaves the floor's count once vetoed or
    // finalized, audit3 A3-M1): the next commit releases all eight (`_MAX_RELEASES`), 8 × 16 `bondAtRisk`
    // writes on top of its own work.
    for (let id = 1n; id <= 8n; id++) {
      const c = wideCycle(id, maxAssets, f.bob.address, assets, `earlier ${id}`);
      await ch.commitCycle(id, c.roots, c.totals, c.debtors, []);
      await f.clearingHouse.connect(f.guardian).vetoCycle(id);
    }
    const big = wideCycle(9n, maxDebtors, f.bob.address, assets, "worst");
    const tx = await ch.commitCycle(9n, big.roots, big.totals, big.debtors, [], { gasLimit: TX_GAS_CAP });
    const receipt = await tx.wait();
    // Only the new cycle is left at risk.
    let atRisk = 0n;
    for (const asset of assets) atRisk += await ch.bondAtRisk(asset);
    expect(atRisk).to.equal(BigInt(maxDebtors) * 1000n);
    // The same commit without the releases (a fresh deployment's first commit), for comparison.
    const g = await loadFixture(suretyFixture);
    const first = wideCycle(1n, maxDebtors, g.bob.address, assets, "worst");
    const gasFirst = await g.clearingHouse
      .connect(g.operator)
      .commitCycle.estimateGas(1n, first.roots, first.totals, first.debtors, []);
    console.log(
      `      commitCycle, ${maxDebtors} fresh debtors over ${maxAssets} assets: ${receipt!.gasUsed} gas releasing ` +
        `8 cycles of ${maxAssets} assets, ${gasFirst} estimated without releases (2^24 = ${TX_GAS_CAP})`,
    );
    expect(receipt!.gasUsed).to.be.lessThan(TX_GAS_CAP);
    expect(gasFirst).to.be.lessThan(TX_GAS_CAP);
  });
});

describe("spareBond: the floor's share of bondAtRisk never overflows", () => {
  /** Floor 10,000 bps, bond 1 ETH; alice's 1 ETH to bob listed in cycles 1 and 2, both paid: 1 ETH owed to her. */
  async function fixture() {
    const f = await suretyFixture();
    const ch = f.clearingHouse;
    await ch.connect(f.admin).setBondFloor(10_000);
    await ch.connect(f.admin).postBond(ETH, 0, { value: ONE });
    await f.vault.connect(f.alice).deposit({ value: 10n * ONE });
    const toBob = await signedGuarantee(f, f.alice, f.bob.address, 1n, ONE);
    const { plan: c1 } = await commitPlanned(f, 1n, [toBob]);
    await ch.connect(f.alice).payNetDebit(1, ETH, { value: ONE });
    await time.increaseTo((await ch.getCycle(1)).answerDeadline + 1n);
    const { plan: c2 } = await commitPlanned(f, 2n, [toBob]);
    await ch.connect(f.alice).payNetDebit(2, ETH, { value: ONE });
    await time.increaseTo((await ch.getCycle(2)).answerDeadline + 1n);
    for (const [id, plan] of [
      [1, c1],
      [2, c2],
    ] as const) {
      const bobs = creditProofOf(plan, f.bob.address);
      await ch.claimNetCredit(id, ETH, f.bob.address, bobs.summary, bobs.proof);
    }
    const leaf = guaranteeLeafOf(toBob.payable);
    await ch.proveDoubleListing(
      1,
      2,
      leaf,
      leaf,
      guaranteeProof(c1.guaranteeTree, leaf),
      guaranteeProof(c2.guaranteeTree, leaf),
    );
    expect(await ch.refundOwed(ETH, f.alice.address)).to.equal(ONE);
    // Both cycles are finalized: released now, so that the slot written below is all there is at risk (a
    // later release would subtract their debits from the written value).
    await ch.releaseSettledRisk(8);
    expect(await ch.bondAtRisk(ETH)).to.equal(0n);
    return f;
  }

  /** The storage slot of `bondAtRisk(ETH)`, found by writing candidates of `keccak256(ETH, p)` and reading back. */
  async function atRiskSlot(f: Awaited<ReturnType<typeof fixture>>): Promise<string> {
    const ch = f.clearingHouse;
    const address = await ch.getAddress();
    const current = await ch.bondAtRisk(ETH);
    for (let p = 0; p < 64; p++) {
      const slot = keccak256(AbiCoder.defaultAbiCoder().encode(["address", "uint256"], [ETH, p]));
      const was = await ethers.provider.getStorage(address, slot);
      if (BigInt(was) !== current) continue;
      await ethers.provider.send("hardhat_setStorageAt", [
        address,
        slot,
        zeroPadValue(toBeHex(current + 1n), 32),
      ]);
      const moved = (await ch.bondAtRisk(ETH)) === current + 1n;
      await ethers.provider.send("hardhat_setStorageAt", [address, slot, was]);
      if (moved) return slot;
    }
    throw new Error("bondAtRisk slot not found");
  }

  it("a bondAtRisk of 2^255 or 2^256 − 1 leaves nothing spare (NoRefundPayable), never a panic", async () => {
    const f = await loadFixture(fixture);
    const ch = f.clearingHouse;
    const address = await ch.getAddress();
    const slot = await atRiskSlot(f);
    const set = (v: bigint) =>
      ethers.provider.send("hardhat_setStorageAt", [address, slot, zeroPadValue(toBeHex(v), 32)]);
    for (const huge of [2n ** 255n, 2n ** 256n - 1n]) {
      await set(huge);
      expect(await ch.bondAtRisk(ETH)).to.equal(huge);
      await expect(ch.claimOwedRefund(ETH, f.alice.address))
        .to.be.revertedWithCustomError(ch, "NoRefundPayable")
        .withArgs(ETH, f.alice.address, ONE, ONE);
      await expect(ch.connect(f.alice).withdrawPayout(ETH, f.alice.address)).to.be.revertedWithCustomError(
        ch,
        "NoPayout",
      );
    }
    // Half the floor: the share is ceil((2^256 − 1) / 2) = 2^255, still above the bond.
    await ch.connect(f.admin).setBondFloor(5_000);
    await expect(ch.claimOwedRefund(ETH, f.alice.address)).to.be.revertedWithCustomError(
      ch,
      "NoRefundPayable",
    );
    // Nothing at risk: the whole bond is spare and alice is paid.
    await set(0n);
    await expect(ch.claimOwedRefund(ETH, f.alice.address))
      .to.emit(ch, "OwedRefundPaid")
      .withArgs(ETH, f.alice.address, ONE, 0n);
  });

  it("the share is rounded up as the commit's floor check: 3 wei at 3,333 bps keep 1 wei", async () => {
    const f = await loadFixture(fixture);
    const ch = f.clearingHouse;
    const address = await ch.getAddress();
    const slot = await atRiskSlot(f);
    await ethers.provider.send("hardhat_setStorageAt", [address, slot, zeroPadValue(toBeHex(3n), 32)]);
    await ch.connect(f.admin).setBondFloor(3_333);
    await expect(ch.claimOwedRefund(ETH, f.alice.address))
      .to.emit(ch, "OwedRefundPaid")
      .withArgs(ETH, f.alice.address, ONE - 1n, 1n);
  });
});
