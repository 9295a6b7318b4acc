/**
 * Second outside audit (docs/audit2-findings.md), the bounds it found missing, each attack inverted:
 *
 *  A2-L3  `commitCycle` is bounded by `MAX_DEBTORS_PER_COMMIT` (a netted V2 id counts half a debtor): at the
 *         bound, with fresh accounts (the costliest Vault writes), it fits EIP-7825's 2^24 gas per transaction;
 *         one more reverts `CommitTooLarge`.
 *  A2-L2  The key-gap bound `T + W` caps T at `MAX_KEY_GAP_DELAY` (30 days): an admin delay raised to a century
 *         before a cycle holds a disputing payer's void for 30 days + W, not a century.
 *  A2-L1  After an operator key gap a whole-debit void waits a payment window past the extended answer deadline
 *         (revealed or not): the per-position voids come first, so a payer's own void no longer concedes the
 *         positions it never disputed.
 */
import { loadFixture, time } from "@nomicfoundation/hardhat-network-helpers";
import { expect } from "chai";
import { ZeroHash, getAddress, keccak256, parseEther, toUtf8Bytes } from "ethers";

import {
  ETH,
  GUARANTEES_ROOT,
  TIMINGS,
  buildCycle,
  commitPlanned,
  disputeAnswerOf,
  signedGuarantee,
  suretyFixture,
} from "./helpers";

const ONE = parseEther("1");
const W = BigInt(TIMINGS.challengeWindow);
const DAY = 86_400n;
const VOIDED = 3n; // DisputeStatus
const ANSWERED = 5n; // DebtStatus

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
  it("the default admin raises the delay to a century, the key manager revokes: the void waits 30 days + W + P at most", async () => {
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
    // Then the per-position phase (A2-L1: one payment window past the extended deadline), and after it the
    // unanswerable dispute is voided against the bond: 30 days + W + P after D at most, whatever the delay.
    const due = cycle.paymentDeadline + (until - cycle.answerDeadline);
    await expect(ch.voidUnansweredDebit(1, ETH, f.alice.address))
      .to.be.revertedWithCustomError(ch, "PaymentWindowOpen")
      .withArgs(1n, due);
    await time.setNextBlockTimestamp(due + 1n);
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

describe("audit2 A2-L1: after a key gap the per-position phase comes before any whole-debit void", () => {
  /** alice signed 1 ETH and 2 ETH to bob (depth 1, both real). Bond 5 ETH. */
  async function fixture() {
    const f = await suretyFixture();
    await f.vault.connect(f.alice).deposit({ value: 10n * ONE });
    await f.clearingHouse.connect(f.admin).postBond(ETH, 0, { value: 5n * ONE });
    const all = [
      await signedGuarantee(f, f.alice, f.bob.address, 1n, ONE),
      await signedGuarantee(f, f.alice, f.bob.address, 2n, 2n * ONE),
    ];
    await commitPlanned(f, 1n, all);
    return { ...f, all };
  }

  /** alice disputes position 0 (revealing her summary first or not), the key is revoked and never replaced. */
  async function disputedThroughGap(f: Awaited<ReturnType<typeof fixture>>, reveal: boolean) {
    const ch = f.clearingHouse;
    const mine = disputeAnswerOf(f.all, f.alice.address, 0);
    if (reveal)
      await ch.connect(f.alice).revealSummary(1, ETH, f.alice.address, mine.summary, mine.summaryProof);
    await ch.connect(f.alice).disputeGuarantee(1, ETH, 0);
    await f.vault.connect(f.admin).revokeOperatorKey();
    const cycle = await ch.getCycle(1);
    const until = await f.vault.answerDeadlineAfterKeyGap(cycle.answerDeadline);
    expect(until).to.be.greaterThan(cycle.paymentDeadline);
    const due = cycle.paymentDeadline + (until - cycle.answerDeadline);
    await time.setNextBlockTimestamp(until + 1n);
    // In the first block after the extension alice's void is refused: the payment window runs again.
    await expect(ch.connect(f.alice).voidUnansweredDebit(1, ETH, f.alice.address))
      .to.be.revertedWithCustomError(ch, "PaymentWindowOpen")
      .withArgs(1n, due);
    return { mine, due };
  }

  for (const reveal of [true, false]) {
    it(`revoked, not replaced (${reveal ? "revealed" : "unrevealed"} tree): the disputed position alone is conceded`, async () => {
      const f = await loadFixture(fixture);
      const ch = f.clearingHouse;
      const { mine } = await disputedThroughGap(f, reveal);
      // Core's keeper (anyone) reveals the tree if needed and concedes the disputed position at its amount.
      if (!reveal) await ch.revealSummary(1, ETH, f.alice.address, mine.summary, mine.summaryProof);
      // Which of the two guarantees sits at position 0 follows their ids, i.e. the Vault's address, which
      // depends on how many transactions earlier test files sent: read it from the tree.
      const disputed = BigInt(mine.leaf.sum);
      const undisputed = 3n * ONE - disputed;
      await expect(ch.voidUnansweredPosition(1, ETH, f.alice.address, 0, mine.leaf, mine.path))
        .to.emit(ch, "DisputeResolved")
        .withArgs(1n, ETH, f.alice.address, 0n, VOIDED, ZeroHash, disputed);
      const debt = await ch.debtOf(1, ETH, f.alice.address);
      expect(debt.status).to.equal(ANSWERED);
      expect(debt.amount).to.equal(undisputed); // the undisputed position stays owed
      await expect(
        ch.connect(f.alice).voidUnansweredDebit(1, ETH, f.alice.address),
      ).to.be.revertedWithCustomError(ch, "DebtAlreadyResolved");
      expect(await f.vault.obligationOf(f.alice.address, ETH)).to.equal(undisputed);
      expect(await ch.bondOf(ETH)).to.equal(5n * ONE - disputed);
    });
  }

  it("if nobody proves a position in that window, the unanswered rest is conceded after it (audit M-1 as before)", async () => {
    const f = await loadFixture(fixture);
    const ch = f.clearingHouse;
    const { due } = await disputedThroughGap(f, true);
    await time.setNextBlockTimestamp(due + 1n);
    await expect(ch.connect(f.alice).voidUnansweredDebit(1, ETH, f.alice.address))
      .to.emit(ch, "UnansweredConceded")
      .withArgs(1n, ETH, f.alice.address, 3n * ONE, 1);
  });
});
