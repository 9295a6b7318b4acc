/**
 * Second outside audit (docs/audit2-findings.md), the bounds it found missing, each attack inverted:
 *
 *  A2-L3  `commitCycle` is bounded by `MAX_DEBTORS_PER_COMMIT` (a netted V2 id counts half a debtor): at the
 *         bound, with fresh accounts (the costliest Vault writes), it fits EIP-7825's 2^24 gas per transaction;
 *         one more reverts `CommitTooLarge`.
 *  A2-L2  The key-gap bound `T + W` caps T at `MAX_KEY_GAP_DELAY` (30 days): an admin delay raised to a century
 *         before a cycle holds a disputing payer's void for 30 days + W, not a century.
 */
import { loadFixture, time } from "@nomicfoundation/hardhat-network-helpers";
import { expect } from "chai";
import { getAddress, keccak256, parseEther, toUtf8Bytes } from "ethers";

import {
  ETH,
  GUARANTEES_ROOT,
  TIMINGS,
  buildCycle,
  commitPlanned,
  signedGuarantee,
  suretyFixture,
} from "./helpers";

const ONE = parseEther("1");
const W = BigInt(TIMINGS.challengeWindow);
const DAY = 86_400n;

const TX_GAS_CAP = 2n ** 24n;

/** A fresh address (no Vault account yet: recording its obligation writes a zero slot, the worst case). */
const fresh = (label: string): string => getAddress("0x" + keccak256(toUtf8Bytes(label)).slice(26));

/** A cycle of `debtors` debtors of one payment each, spread over `assets` assets, each asset owed to bob. */
function wideCycle(cycleId: bigint, debtors: number, creditor: string, assets: string[] = [ETH]) {
  const positions: { asset: string; participant: string; debit: bigint; credit: bigint }[] = [];
  for (let i = 0; i < debtors; i++) {
    positions.push({
      asset: assets[i % assets.length],
      participant: fresh(`debtor ${i}`),
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

const v2Ids = (count: number): string[] =>
  Array.from({ length: count }, (_, i) => keccak256(toUtf8Bytes(`v2 ${i}`)));

describe("audit2 A2-L3: commitCycle is bounded under EIP-7825's 2^24 gas per transaction", () => {
  it("commits MAX_DEBTORS_PER_COMMIT fresh debtors in one capped transaction; one more reverts CommitTooLarge", async () => {
    const f = await loadFixture(suretyFixture);
    const ch = f.clearingHouse.connect(f.operator);
    const max = Number(await ch.MAX_DEBTORS_PER_COMMIT());
    expect(max).to.equal(200);
    const over = wideCycle(1n, max + 1, f.bob.address);
    await expect(ch.commitCycle(1n, over.roots, over.totals, over.debtors, []))
      .to.be.revertedWithCustomError(ch, "CommitTooLarge")
      .withArgs(max + 1, 0);
    const c = wideCycle(1n, max, f.bob.address);
    const tx = await ch.commitCycle(1n, c.roots, c.totals, c.debtors, [], { gasLimit: TX_GAS_CAP });
    const receipt = await tx.wait();
    console.log(`      commitCycle, ${max} fresh debtors, 1 asset: ${receipt!.gasUsed} gas`);
    expect(receipt!.gasUsed).to.be.lessThan(15_000_000n);
  });

  it("at the bound spread over 16 assets, and with V2 ids (half a debtor each), still under 2^24", async () => {
    const f = await loadFixture(suretyFixture);
    const ch = f.clearingHouse.connect(f.operator);
    const max = Number(await ch.MAX_DEBTORS_PER_COMMIT());
    const assets = [ETH, ...Array.from({ length: 15 }, (_, i) => fresh(`asset ${i}`))];
    const spread = wideCycle(1n, max, f.bob.address, assets);
    const gasSpread = await ch.commitCycle.estimateGas(1n, spread.roots, spread.totals, spread.debtors, []);
    // Only V2 ids: 2 × the bound; one more is over it.
    const empty = wideCycle(1n, 0, f.bob.address);
    await expect(ch.commitCycle(1n, empty.roots, empty.totals, empty.debtors, v2Ids(2 * max + 1)))
      .to.be.revertedWithCustomError(ch, "CommitTooLarge")
      .withArgs(0, 2 * max + 1);
    const gasIds = await ch.commitCycle.estimateGas(
      1n,
      empty.roots,
      empty.totals,
      empty.debtors,
      v2Ids(2 * max),
    );
    // A mix: max − 1 debtors and 2 ids fit; max debtors and 1 id (rounded up to a whole debtor) do not.
    const mixed = wideCycle(1n, max - 1, f.bob.address);
    const gasMixed = await ch.commitCycle.estimateGas(1n, mixed.roots, mixed.totals, mixed.debtors, v2Ids(2));
    const full = wideCycle(1n, max, f.bob.address);
    await expect(ch.commitCycle(1n, full.roots, full.totals, full.debtors, v2Ids(1)))
      .to.be.revertedWithCustomError(ch, "CommitTooLarge")
      .withArgs(max, 1);
    console.log(
      `      commitCycle at the bound: ${max} debtors over 16 assets ${gasSpread}, ${2 * max} V2 ids ${gasIds}, ` +
        `${max - 1} debtors + 2 ids ${gasMixed}`,
    );
    for (const gas of [gasSpread, gasIds, gasMixed]) expect(gas).to.be.lessThan(TX_GAS_CAP);
  });
});

describe("audit2 A2-L2: the key-gap bound caps the admin's delay at MAX_KEY_GAP_DELAY", () => {
  it("the default admin raises the delay to a century, the key manager revokes: the void waits 30 days + W", async () => {
    const f = await loadFixture(suretyFixture);
    const ch = f.clearingHouse;
    const CENTURY = 100n * 365n * DAY;
    const cap = await f.vault.MAX_KEY_GAP_DELAY();
    expect(cap).to.equal(30n * DAY);
    await f.vault.connect(f.admin).changeDefaultAdminDelay(CENTURY);
    await time.increase(5 * 86_400 + 1);
    expect(await f.vault.timelockDelay()).to.equal(CENTURY);
    await f.vault.connect(f.alice).deposit({ value: 10n * ONE });
    await ch.connect(f.admin).postBond(ETH, 0, { value: 5n * ONE });
    await commitPlanned(f, 1n, [await signedGuarantee(f, f.alice, f.bob.address, 1n, 3n * ONE)]);
    await ch.connect(f.alice).disputeGuarantee(1, ETH, 0); // a position nobody answers
    await f.vault.connect(f.admin).revokeOperatorKey();
    const cycle = await ch.getCycle(1);
    const until = await f.vault.answerDeadlineAfterKeyGap(cycle.answerDeadline);
    expect(until).to.equal(cycle.answerDeadline + cap + W);
    await time.setNextBlockTimestamp(until);
    await expect(ch.voidUnansweredDebit(1, ETH, f.alice.address))
      .to.be.revertedWithCustomError(ch, "AnswerWindowExtended")
      .withArgs(1n, until);
    // Past the capped bound the unanswerable dispute is voided against the bond (no key can answer in time).
    await expect(ch.voidUnansweredDebit(1, ETH, f.alice.address)).to.emit(ch, "DebitVoided");
    expect(await f.vault.obligationOf(f.alice.address, ETH)).to.equal(0n);
  });

  it("under the cap the bound is T + W as before", async () => {
    const f = await loadFixture(suretyFixture);
    const T = await f.vault.timelockDelay();
    expect(T).to.be.lessThan(await f.vault.MAX_KEY_GAP_DELAY());
    await f.vault.connect(f.alice).deposit({ value: 10n * ONE });
    await commitPlanned(f, 1n, [await signedGuarantee(f, f.alice, f.bob.address, 1n, ONE)]);
    await f.vault.connect(f.admin).revokeOperatorKey();
    const revokedAt = BigInt(await time.latest());
    const cycle = await f.clearingHouse.getCycle(1);
    // One answer window W from the earliest a replacement can be in effect (revocation + T), within D + T + W.
    expect(await f.vault.answerDeadlineAfterKeyGap(cycle.answerDeadline)).to.equal(revokedAt + T + W);
    expect(revokedAt).to.be.lessThan(cycle.answerDeadline);
  });
});
