/**
 * The clearing engine (operator/clearing): multilateral netting, the cycle's Merkle tree and the exact
 * commitCycle arguments, checked by hand, by property on random cycles, and against the real contracts.
 */
import { debitSummaryProof, summaryStruct } from "../../sdk/debit-tree";
import { loadFixture, time } from "@nomicfoundation/hardhat-network-helpers";
import { expect } from "chai";
import { ZeroAddress, getAddress, parseEther, parseUnits } from "ethers";

import {
  buildCommitPlan,
  loadCycleTree,
  participantPositions,
  placeholderLeaf,
  toCommitCycleCall,
  type CommitPlan,
} from "../../operator/clearing/commit-plan";
import {
  MAX_NET_DEBIT,
  NettingInvariantError,
  isEmptyCycle,
  netCycle,
  type NettingResult,
  type PayableGuarantee,
} from "../../operator/clearing/netting";
import { WireError } from "../../sdk/errors";
import { leafHash, verifyLeafProof } from "../../sdk/merkle";
import { DEFAULT_TIMINGS } from "../../scripts/deploy";
import { suretyFixture } from "../contracts/helpers";

const USD = (n: number | string): bigint => parseUnits(String(n), 6);
const ETH_ASSET = ZeroAddress;
const NETTED = 2n; // Vault.Consumption.Netted

/** A distinct bytes32 id per number. */
const gid = (n: number): string => "0x" + n.toString(16).padStart(64, "0");

interface People {
  alice: string;
  bob: string;
  carol: string;
  dave: string;
}

/**
 * 3 payers and 3 recipients per asset, alice/bob/carol both pay and receive, dave pays himself in ETH.
 *   USD: alice→bob 100 (V1), bob→carol 30 (V2), carol→alice 50 (V1), dave→bob 20 (V2), alice→carol 10 (V1)
 *        nets: alice −60, bob +90, carol −10, dave −20            (sum 0)
 *   ETH: bob→alice 5 (V2), alice→bob 2 (V1), carol→alice 1 (V1), dave→dave 7 (V2, self-payment)
 *        nets: alice +4, bob −3, carol −1, dave 0 (no leaf)       (sum 0)
 */
function handExample(p: People, usd: string): PayableGuarantee[] {
  const g = (n: number, version: 1 | 2, user: string, recipient: string, asset: string, amount: bigint) => ({
    guaranteeId: gid(n),
    version,
    user,
    recipient,
    asset,
    amount,
  });
  return [
    g(1, 1, p.alice, p.bob, usd, USD(100)),
    g(2, 2, p.bob, p.carol, usd, USD(30)),
    g(3, 1, p.carol, p.alice, usd, USD(50)),
    g(4, 2, p.dave, p.bob, usd, USD(20)),
    g(5, 1, p.alice, p.carol, usd, USD(10)),
    g(6, 2, p.bob, p.alice, ETH_ASSET, parseEther("5")),
    g(7, 1, p.alice, p.bob, ETH_ASSET, parseEther("2")),
    g(8, 1, p.carol, p.alice, ETH_ASSET, parseEther("1")),
    g(9, 2, p.dave, p.dave, ETH_ASSET, parseEther("7")),
  ];
}

// Fixed addresses for the pure tests; their lower-case hex order is alice < bob < carol < dave < token.
const PEOPLE: People = {
  alice: getAddress("0x1a1ce00000000000000000000000000000000001"),
  bob: getAddress("0x2b0b000000000000000000000000000000000002"),
  carol: getAddress("0x3ca401000000000000000000000000000000c003"),
  dave: getAddress("0x4da7e00000000000000000000000000000000d04"),
};
const TOKEN = getAddress("0x5555555555555555555555555555555555555555");

/** mulberry32, so random cycles are the same on every run. */
function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Flips the letter case of an address at random (the netting must not care). */
function randomCase(address: string, random: () => number): string {
  return (
    "0x" + [...address.slice(2)].map((c) => (random() < 0.5 ? c.toLowerCase() : c.toUpperCase())).join("")
  );
}

function shuffle<T>(items: T[], random: () => number): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [copy[i], copy[j]] = [copy[j], copy[i]];
  }
  return copy;
}

function randomCycle(random: () => number, size: number, participants: string[], assets: string[]) {
  return Array.from({ length: size }, (_, i): PayableGuarantee => {
    const user = participants[Math.floor(random() * participants.length)];
    // ~1 in 20 is a self-payment, to mix them in.
    const recipient = random() < 0.05 ? user : participants[Math.floor(random() * participants.length)];
    return {
      guaranteeId: gid(1000 + i),
      version: random() < 0.5 ? 1 : 2,
      user: randomCase(user, random),
      recipient: randomCase(recipient, random),
      asset: randomCase(assets[Math.floor(random() * assets.length)], random),
      amount: BigInt(1 + Math.floor(random() * 1_000_000)) * (random() < 0.1 ? 10n ** 30n : 1n),
    };
  });
}

/** Reference netting written as plainly as possible, to compare against. */
function referenceNets(guarantees: PayableGuarantee[]): Map<string, bigint> {
  const nets = new Map<string, bigint>();
  const add = (asset: string, who: string, delta: bigint) => {
    const key = `${asset.toLowerCase()}/${who.toLowerCase()}`;
    nets.set(key, (nets.get(key) ?? 0n) + delta);
  };
  for (const g of guarantees) {
    add(g.asset, g.user, -g.amount);
    add(g.asset, g.recipient, g.amount);
  }
  return nets;
}

function expectWireError(fn: () => unknown, field: string): void {
  try {
    fn();
  } catch (error) {
    expect(error).to.be.instanceOf(WireError);
    expect((error as WireError).field).to.equal(field);
    return;
  }
  expect.fail(`expected a WireError on ${field}`);
}

/** Netting inputs by result, so that plan() can build the guarantees root from the same list. */
const inputs = new WeakMap<NettingResult, PayableGuarantee[]>();

function net(cycleId: bigint, guarantees: Iterable<PayableGuarantee>): NettingResult {
  const list = [...guarantees];
  const result = netCycle(cycleId, list);
  inputs.set(result, list);
  return result;
}

function plan(result: NettingResult): CommitPlan {
  const built = buildCommitPlan(result, inputs.get(result) ?? []);
  if (built === null) throw new Error("expected a commit plan");
  return built;
}

describe("clearing: netting", function () {
  describe("hand-computed cycle", function () {
    const result = net(7n, handExample(PEOPLE, TOKEN));

    it("nets each asset to received − paid per participant, zero nets left out", function () {
      expect(result.cycleId).to.equal(7n);
      expect(result.assets.map((a) => a.asset)).to.deep.equal([ETH_ASSET, TOKEN]);
      const [eth, usd] = result.assets;
      expect(eth.positions).to.deep.equal([
        { participant: PEOPLE.alice, net: parseEther("4"), debit: 0n, credit: parseEther("4") },
        { participant: PEOPLE.bob, net: -parseEther("3"), debit: parseEther("3"), credit: 0n },
        { participant: PEOPLE.carol, net: -parseEther("1"), debit: parseEther("1"), credit: 0n },
      ]);
      expect(usd.positions).to.deep.equal([
        { participant: PEOPLE.alice, net: -USD(60), debit: USD(60), credit: 0n },
        { participant: PEOPLE.bob, net: USD(90), debit: 0n, credit: USD(90) },
        { participant: PEOPLE.carol, net: -USD(10), debit: USD(10), credit: 0n },
        { participant: PEOPLE.dave, net: -USD(20), debit: USD(20), credit: 0n },
      ]);
      expect([eth.guaranteeCount, usd.guaranteeCount]).to.deep.equal([4, 5]);
      expect(eth.grossAmount).to.equal(parseEther("15"));
      expect(usd.grossAmount).to.equal(USD(210));
    });

    it("gives balanced totals and the debtor obligations in (asset, debtor) order", function () {
      expect(result.totals).to.deep.equal([
        { asset: ETH_ASSET, totalDebit: parseEther("4"), totalCredit: parseEther("4") },
        { asset: TOKEN, totalDebit: USD(90), totalCredit: USD(90) },
      ]);
      expect(result.obligations).to.deep.equal([
        { asset: ETH_ASSET, debtor: PEOPLE.bob, amount: parseEther("3") },
        { asset: ETH_ASSET, debtor: PEOPLE.carol, amount: parseEther("1") },
        { asset: TOKEN, debtor: PEOPLE.alice, amount: USD(60) },
        { asset: TOKEN, debtor: PEOPLE.carol, amount: USD(10) },
        { asset: TOKEN, debtor: PEOPLE.dave, amount: USD(20) },
      ]);
    });

    it("lists every guarantee as included, the V2 ones as netted, the self-payment apart", function () {
      expect(result.includedIds).to.deep.equal([1, 2, 3, 4, 5, 6, 7, 8, 9].map(gid));
      // gid(9) is a V2 self-payment: settled, but its id is not listed on chain.
      expect(result.nettedV2Ids).to.deep.equal([2, 4, 6].map(gid));
      expect(result.selfPaymentIds).to.deep.equal([gid(9)]);
      expect(isEmptyCycle(result)).to.be.false;
    });

    it("reports the reserved V1 ids of the cycle apart, never lists them on chain (docs/clearing.md, Reserved V1 ids)", function () {
      // gid(3) and gid(8) are V1 with a seller's reserve; gid(42) is reserved but not in this cycle.
      const reserved = netCycle(7n, handExample(PEOPLE, TOKEN), new Set([gid(8), gid(3), gid(42)]));
      expect(reserved.nettedV2Ids).to.deep.equal([2, 4, 6].map(gid));
      expect(reserved.reservedV1Ids).to.deep.equal([3, 8].map(gid));
      expect(result.reservedV1Ids).to.deep.equal([]);
      expect(reserved.includedIds).to.deep.equal(result.includedIds);
      expect(reserved.obligations).to.deep.equal(result.obligations);
      expect(reserved.totals).to.deep.equal(result.totals);
    });

    it("builds one leaf per non-zero position and commit arguments equal to the netting", function () {
      const p = plan(result);
      expect(p.placeholder).to.be.false;
      expect(p.leaves.map((l) => [l.asset, l.participant, l.debit, l.credit])).to.deep.equal([
        [ETH_ASSET, PEOPLE.alice, 0n, parseEther("4")],
        [ETH_ASSET, PEOPLE.bob, parseEther("3"), 0n],
        [ETH_ASSET, PEOPLE.carol, parseEther("1"), 0n],
        [TOKEN, PEOPLE.alice, USD(60), 0n],
        [TOKEN, PEOPLE.bob, 0n, USD(90)],
        [TOKEN, PEOPLE.carol, USD(10), 0n],
        [TOKEN, PEOPLE.dave, USD(20), 0n],
      ]);
      expect(p.leaves.every((l) => l.cycleId === 7n)).to.be.true;
      expect(p.tree.length).to.equal(7);
      expect(toCommitCycleCall(p.args)).to.deep.equal([
        7n,
        { root: p.root, guaranteesRoot: p.guaranteeTree.root, debitsRoot: p.args.debitsRoot },
        result.totals,
        result.obligations,
        result.nettedV2Ids,
      ]);
      // Each leaf is in the tree under the sdk's leaf hash and proves against the root.
      for (const leaf of p.leaves) {
        const [position] = participantPositions(p.tree, leaf.participant).filter(
          (x) => x.asset === leaf.asset,
        );
        expect(verifyLeafProof(p.root, leaf, position.proof)).to.be.true;
        expect(p.tree.leafLookup(treeValues(leaf))).to.be.at.least(0);
        expect(p.tree.leafHash(treeValues(leaf))).to.equal(leafHash(leaf));
      }
    });
  });

  describe("edge cases", function () {
    it("nets a self-payment to nothing but still includes it (its V2 id is not listed on chain)", function () {
      const result = net(1n, [
        {
          guaranteeId: gid(1),
          version: 2,
          user: PEOPLE.alice,
          recipient: PEOPLE.alice,
          asset: TOKEN,
          amount: 5n,
        },
      ]);
      expect(result.assets).to.deep.equal([
        { asset: TOKEN, guaranteeCount: 1, grossAmount: 5n, positions: [], totalDebit: 0n, totalCredit: 0n },
      ]);
      expect(result.totals).to.deep.equal([]);
      expect(result.obligations).to.deep.equal([]);
      expect(result.includedIds).to.deep.equal([gid(1)]);
      expect(result.nettedV2Ids).to.deep.equal([]);
      expect(result.selfPaymentIds).to.deep.equal([gid(1)]);
      const p = plan(result);
      expect(p.placeholder).to.be.true;
      expect(p.leaves).to.deep.equal([]);
      expect(p.args.nettedV2Ids).to.deep.equal([]);
    });

    it("drops an asset whose positions all net to zero from the totals, keeps its guarantees", function () {
      const result = net(1n, [
        {
          guaranteeId: gid(1),
          version: 1,
          user: PEOPLE.alice,
          recipient: PEOPLE.bob,
          asset: ETH_ASSET,
          amount: 9n,
        },
        {
          guaranteeId: gid(2),
          version: 2,
          user: PEOPLE.bob,
          recipient: PEOPLE.alice,
          asset: ETH_ASSET,
          amount: 9n,
        },
        {
          guaranteeId: gid(3),
          version: 1,
          user: PEOPLE.alice,
          recipient: PEOPLE.bob,
          asset: TOKEN,
          amount: 4n,
        },
      ]);
      expect(result.assets.map((a) => [a.asset, a.positions.length])).to.deep.equal([
        [ETH_ASSET, 0],
        [TOKEN, 2],
      ]);
      expect(result.totals).to.deep.equal([{ asset: TOKEN, totalDebit: 4n, totalCredit: 4n }]);
      expect(result.obligations).to.deep.equal([{ asset: TOKEN, debtor: PEOPLE.alice, amount: 4n }]);
      expect(result.includedIds).to.deep.equal([gid(1), gid(2), gid(3)]);
      expect(result.nettedV2Ids).to.deep.equal([gid(2)]);
    });

    it("commits a cycle whose every position nets to zero with the single placeholder leaf", function () {
      const result = net(3n, [
        {
          guaranteeId: gid(1),
          version: 2,
          user: PEOPLE.alice,
          recipient: PEOPLE.bob,
          asset: TOKEN,
          amount: 9n,
        },
        {
          guaranteeId: gid(2),
          version: 1,
          user: PEOPLE.bob,
          recipient: PEOPLE.alice,
          asset: TOKEN,
          amount: 9n,
        },
      ]);
      const p = plan(result);
      expect(p.placeholder).to.be.true;
      expect(p.tree.length).to.equal(1);
      expect(p.root).to.equal(leafHash(placeholderLeaf(3n))); // a one-leaf tree's root is the leaf
      expect(p.args.totals).to.deep.equal([]);
      expect(p.args.debtors).to.deep.equal([]);
      expect(p.args.nettedV2Ids).to.deep.equal([gid(1)]);
      // The placeholder is nobody's position.
      expect(participantPositions(p.tree, ZeroAddress)).to.deep.equal([]);
    });

    it("has nothing to commit for a cycle without guarantees", function () {
      const result = net(1n, []);
      expect(result).to.deep.equal({
        cycleId: 1n,
        assets: [],
        totals: [],
        obligations: [],
        nettedV2Ids: [],
        reservedV1Ids: [],
        includedIds: [],
        selfPaymentIds: [],
      });
      expect(isEmptyCycle(result)).to.be.true;
      expect(buildCommitPlan(result, [])).to.equal(null);
    });

    it("treats addresses in any letter case as one participant and returns them EIP-55", function () {
      const lower = PEOPLE.alice.toLowerCase();
      const upper = "0x" + PEOPLE.alice.slice(2).toUpperCase();
      const result = net(1n, [
        {
          guaranteeId: gid(1),
          version: 1,
          user: lower,
          recipient: PEOPLE.bob,
          asset: TOKEN.toLowerCase(),
          amount: 3n,
        },
        { guaranteeId: gid(2), version: 1, user: upper, recipient: PEOPLE.bob, asset: TOKEN, amount: 4n },
        { guaranteeId: gid(3), version: 1, user: PEOPLE.bob, recipient: upper, asset: TOKEN, amount: 2n },
      ]);
      expect(result.assets[0].asset).to.equal(TOKEN);
      expect(result.assets[0].positions.map((p) => [p.participant, p.net])).to.deep.equal([
        [PEOPLE.alice, -5n],
        [PEOPLE.bob, 5n],
      ]);
    });

    it("lower-cases guarantee ids and sorts the V2 ids", function () {
      const result = net(1n, [
        {
          guaranteeId: "0x" + "BB".repeat(32),
          version: 2,
          user: PEOPLE.alice,
          recipient: PEOPLE.bob,
          asset: TOKEN,
          amount: 1n,
        },
        {
          guaranteeId: "0x" + "aa".repeat(32),
          version: 2,
          user: PEOPLE.alice,
          recipient: PEOPLE.bob,
          asset: TOKEN,
          amount: 1n,
        },
      ]);
      expect(result.includedIds).to.deep.equal(["0x" + "bb".repeat(32), "0x" + "aa".repeat(32)]);
      expect(result.nettedV2Ids).to.deep.equal(["0x" + "aa".repeat(32), "0x" + "bb".repeat(32)]);
    });

    it("accepts any iterable (e.g. rows streamed from the store)", function () {
      function* rows(): Generator<PayableGuarantee> {
        yield* handExample(PEOPLE, TOKEN);
      }
      expect(plan(net(7n, rows())).root).to.equal(plan(net(7n, handExample(PEOPLE, TOKEN))).root);
    });
  });

  describe("bad input", function () {
    const good: PayableGuarantee = {
      guaranteeId: gid(1),
      version: 1,
      user: PEOPLE.alice,
      recipient: PEOPLE.bob,
      asset: TOKEN,
      amount: 1n,
    };
    const withField = (field: string, value: unknown): PayableGuarantee[] => [
      good,
      { ...good, guaranteeId: gid(2), [field]: value } as PayableGuarantee,
    ];

    it("names the field of a malformed guarantee", function () {
      expectWireError(() => net(1n, withField("guaranteeId", "0x1234")), "guarantees[1].guaranteeId");
      expectWireError(() => net(1n, withField("guaranteeId", 5)), "guarantees[1].guaranteeId");
      expectWireError(() => net(1n, withField("version", 3)), "guarantees[1].version");
      expectWireError(() => net(1n, withField("amount", 0n)), "guarantees[1].amount");
      expectWireError(() => net(1n, withField("amount", -1n)), "guarantees[1].amount");
      expectWireError(() => net(1n, withField("amount", 1)), "guarantees[1].amount");
      expectWireError(() => net(1n, withField("amount", 1n << 256n)), "guarantees[1].amount");
      expectWireError(() => net(1n, withField("user", "0x1234")), "guarantees[1].user");
      expectWireError(() => net(1n, withField("recipient", undefined)), "guarantees[1].recipient");
      expectWireError(() => net(1n, withField("asset", "ETH")), "guarantees[1].asset");
    });

    it("rejects the zero address as payer or recipient (it could neither pay nor claim)", function () {
      expectWireError(() => net(1n, withField("user", ZeroAddress)), "guarantees[1].user");
      expectWireError(() => net(1n, withField("recipient", ZeroAddress)), "guarantees[1].recipient");
    });

    it("rejects a guarantee listed twice, whatever the case of its id (it would be paid twice)", function () {
      expectWireError(
        () =>
          net(1n, [
            { ...good, guaranteeId: "0x" + "ab".repeat(32) },
            { ...good, guaranteeId: "0x" + "AB".repeat(32) },
          ]),
        "guarantees[1].guaranteeId",
      );
    });

    it("rejects a cycle id the ClearingHouse could never accept", function () {
      expectWireError(() => net(0n, [good]), "cycleId");
      expectWireError(() => net(1 as unknown as bigint, [good]), "cycleId");
      expectWireError(() => net(1n << 256n, [good]), "cycleId");
    });

    it("refuses a net debit the ClearingHouse cannot store (uint248)", function () {
      const huge = [
        { ...good, amount: MAX_NET_DEBIT },
        { ...good, guaranteeId: gid(2), amount: 1n },
      ];
      expect(() => net(1n, huge)).to.throw(NettingInvariantError, /exceeds uint248/);
      expect(net(1n, [{ ...good, amount: MAX_NET_DEBIT }]).totals[0].totalDebit).to.equal(MAX_NET_DEBIT);
    });
  });

  describe("properties on random cycles (seeded)", function () {
    const participants = Array.from({ length: 12 }, (_, i) =>
      getAddress("0x" + (i + 1).toString(16).padStart(40, "ab")),
    );
    const assets = [ETH_ASSET, TOKEN, getAddress("0x" + "c0ffee".padEnd(40, "0"))];

    it("sums to zero per asset, matches a reference netting, and every leaf proves", function () {
      const random = prng(42);
      for (let round = 0; round < 25; round++) {
        const guarantees = randomCycle(random, 1 + Math.floor(random() * 300), participants, assets);
        const result = net(BigInt(round + 1), guarantees);
        const reference = referenceNets(guarantees);

        for (const asset of result.assets) {
          const sum = asset.positions.reduce((acc, p) => acc + p.net, 0n);
          expect(sum).to.equal(0n);
          expect(asset.totalDebit).to.equal(asset.totalCredit);
          for (const p of asset.positions) {
            expect(p.net).to.not.equal(0n);
            expect(p.debit === 0n || p.credit === 0n).to.be.true;
            expect(p.credit - p.debit).to.equal(p.net);
            expect(reference.get(`${asset.asset.toLowerCase()}/${p.participant.toLowerCase()}`)).to.equal(
              p.net,
            );
          }
        }
        // Every non-zero reference net appears as a position, and nothing else does.
        const nonZero = [...reference.values()].filter((v) => v !== 0n).length;
        expect(result.assets.reduce((n, a) => n + a.positions.length, 0)).to.equal(nonZero);
        for (const total of result.totals) {
          const owed = result.obligations
            .filter((o) => o.asset === total.asset)
            .reduce((acc, o) => acc + o.amount, 0n);
          expect(owed).to.equal(total.totalDebit);
          expect(total.totalDebit).to.be.greaterThan(0n);
        }
        expect(result.includedIds.length).to.equal(guarantees.length);
        expect(result.nettedV2Ids.length).to.equal(
          guarantees.filter((g) => g.version === 2 && g.user.toLowerCase() !== g.recipient.toLowerCase())
            .length,
        );
        expect(result.selfPaymentIds.length).to.equal(
          guarantees.filter((g) => g.user.toLowerCase() === g.recipient.toLowerCase()).length,
        );

        if (round % 5 !== 0) continue; // the tree checks are slower; every fifth cycle is enough
        const p = plan(result);
        const reloaded = loadCycleTree(JSON.parse(JSON.stringify(p.treeDump)), p.root);
        for (const leaf of p.leaves) {
          const positions = participantPositions(reloaded, leaf.participant.toLowerCase());
          const mine = positions.find((x) => x.asset === leaf.asset);
          expect(mine).to.include({ debit: leaf.debit, credit: leaf.credit, cycleId: leaf.cycleId });
          expect(verifyLeafProof(p.root, leaf, mine!.proof)).to.be.true;
        }
      }
    });

    it("gives the same root and commit arguments whatever the input order and letter case", function () {
      const random = prng(7);
      const guarantees = randomCycle(random, 400, participants, assets);
      const base = plan(net(5n, guarantees));
      for (let i = 0; i < 5; i++) {
        const reordered = shuffle(guarantees, random).map((g) => ({
          ...g,
          user: randomCase(g.user, random),
          recipient: randomCase(g.recipient, random),
          asset: randomCase(g.asset, random),
          guaranteeId: random() < 0.5 ? g.guaranteeId.toUpperCase().replace("0X", "0x") : g.guaranteeId,
        }));
        const again = plan(net(5n, reordered));
        expect(again.root).to.equal(base.root);
        expect(again.args).to.deep.equal(base.args);
        expect(again.treeDump).to.deep.equal(base.treeDump);
      }
      // A different cycle id is a different tree.
      expect(plan(net(6n, guarantees)).root).to.not.equal(base.root);
    });
  });

  describe("stored tree", function () {
    const p = plan(net(7n, handExample(PEOPLE, TOKEN)));

    it("reloads from its JSON dump and serves each participant's positions with proofs", function () {
      const tree = loadCycleTree(JSON.parse(JSON.stringify(p.treeDump)), p.root);
      expect(tree.root).to.equal(p.root);
      const alice = participantPositions(tree, PEOPLE.alice.toUpperCase().replace("0X", "0x"));
      expect(alice.map((x) => [x.asset, x.debit, x.credit])).to.deep.equal([
        [ETH_ASSET, 0n, parseEther("4")],
        [TOKEN, USD(60), 0n],
      ]);
      expect(participantPositions(tree, getAddress("0x" + "99".repeat(20)))).to.deep.equal([]);
      expectWireError(() => participantPositions(tree, "alice"), "participant");
    });

    it("refuses a dump with another root, a tampered value or another leaf encoding", function () {
      const dump = JSON.parse(JSON.stringify(p.treeDump));
      expectWireError(() => loadCycleTree(dump, "0x" + "00".repeat(32)), "dump");
      const tampered = JSON.parse(JSON.stringify(p.treeDump));
      tampered.values[0].value[4] = "999";
      expectWireError(() => loadCycleTree(tampered), "dump");
      const otherEncoding = { ...dump, leafEncoding: ["uint256", "address", "address", "uint256"] };
      expectWireError(() => loadCycleTree(otherEncoding), "dump.leafEncoding");
    });
  });
});

/** The tree's value tuple for a leaf (what StandardMerkleTree.leafLookup expects). */
function treeValues(leaf: {
  cycleId: bigint;
  asset: string;
  participant: string;
  debit: bigint;
  credit: bigint;
}) {
  return [String(leaf.cycleId), leaf.asset, leaf.participant, String(leaf.debit), String(leaf.credit)] as [
    string,
    string,
    string,
    string,
    string,
  ];
}

describe("clearing: committing a plan on chain", function () {
  async function committedFixture() {
    const f = await suretyFixture();
    const people: People = {
      alice: f.alice.address,
      bob: f.bob.address,
      carol: f.carol.address,
      dave: f.dave.address,
    };
    const result = net(1n, handExample(people, f.usdAddress));
    const p = plan(result);
    // Debtors hold at least their debit as collateral (Core only issues against collateral).
    await f.vault.connect(f.alice).depositToken(f.usdAddress, USD(60));
    await f.vault.connect(f.carol).depositToken(f.usdAddress, USD(10));
    await f.vault.connect(f.dave).depositToken(f.usdAddress, USD(25));
    await f.vault.connect(f.bob).deposit({ value: parseEther("3") });
    await f.vault.connect(f.carol).deposit({ value: parseEther("1") });
    const tx = await f.clearingHouse.connect(f.operator).commitCycle(...toCommitCycleCall(p.args));
    // What Core stores: the JSON dump, reloaded later to serve proofs.
    const storedDump = JSON.stringify(p.treeDump);
    return { ...f, people, result, plan: p, tx, storedDump };
  }

  /** Committed and past the challenge window: claims are open. */
  async function claimableFixture() {
    const f = await committedFixture();
    await time.increase(DEFAULT_TIMINGS.challengeWindow + 1);
    return f;
  }

  it("is accepted by commitCycle: root, totals, obligations and V2 marks as planned", async function () {
    const { clearingHouse, vault, tx, plan: p, usdAddress, people } = await loadFixture(committedFixture);
    await expect(tx)
      .to.emit(clearingHouse, "CycleCommitted")
      .withArgs(
        1n,
        p.root,
        (x: bigint) => x > 0n,
        (x: bigint) => x > 0n,
        2n,
        5n,
        3n, // the V2 self-payment (gid 9) is not listed
      );
    await expect(tx).to.emit(clearingHouse, "CycleAssetCommitted").withArgs(1n, ETH_ASSET, parseEther("4"));
    await expect(tx).to.emit(clearingHouse, "CycleAssetCommitted").withArgs(1n, usdAddress, USD(90));
    for (const o of p.args.debtors) {
      await expect(tx).to.emit(clearingHouse, "NetDebitRecorded").withArgs(1n, o.asset, o.debtor, o.amount);
      expect(await vault.obligationOf(o.debtor, o.asset)).to.equal(o.amount);
    }
    expect((await clearingHouse.getCycle(1n)).root).to.equal(p.root);
    expect(await clearingHouse.lastCycleId()).to.equal(1n);
    for (const id of p.args.nettedV2Ids) expect(await vault.consumption(id)).to.equal(NETTED);
    expect(await vault.consumption(gid(1))).to.equal(0n); // V1 ids are not marked
    expect((await clearingHouse.debtOf(1n, usdAddress, people.bob)).status).to.equal(0n); // creditor: no debt
    // The contract's leaf hash is the sdk's.
    const leaf = p.leaves[0];
    expect(
      await clearingHouse.leafHash(leaf.cycleId, leaf.asset, leaf.participant, leaf.debit, leaf.credit),
    ).to.equal(leafHash(leaf));
  });

  it("lets creditors claim with proofs from the stored tree once debtors paid or were covered", async function () {
    const f = await loadFixture(claimableFixture);
    const { clearingHouse, usd, usdAddress, alice, bob, carol, dave, outsider } = f;
    const tree = loadCycleTree(JSON.parse(f.storedDump), f.plan.root);
    const [bobUsd] = participantPositions(tree, bob.address).filter((x) => x.asset === usdAddress);
    const [aliceEth] = participantPositions(tree, alice.address).filter((x) => x.asset === ETH_ASSET);
    expect(bobUsd.credit).to.equal(USD(90));
    expect(aliceEth.credit).to.equal(parseEther("4"));
    // Claims prove the participant's summary under the debitsRoot (issue 25, item 5).
    const claim = (x: typeof bobUsd) => {
      const s = f.plan.debitTrees.summaries.find((y) => y.asset === x.asset && y.debtor === x.participant)!;
      return clearingHouse
        .connect(outsider)
        .claimNetCredit(
          x.cycleId,
          x.asset,
          x.participant,
          summaryStruct(s),
          debitSummaryProof(f.plan.debitTrees.tree, s),
        );
    };

    // USD: alice and dave pay, carol defaults and is covered from her collateral.
    await clearingHouse.connect(alice).payNetDebit(1n, usdAddress);
    await clearingHouse.connect(dave).payNetDebit(1n, usdAddress);
    await expect(claim(bobUsd))
      .to.be.revertedWithCustomError(clearingHouse, "CreditNotYetFunded")
      .withArgs(1n, usdAddress, USD(80), USD(90));
    await time.increase(2 * DEFAULT_TIMINGS.challengeWindow + DEFAULT_TIMINGS.paymentWindow + 1);
    await expect(clearingHouse.connect(outsider).coverDefault(1n, usdAddress, carol.address))
      .to.emit(clearingHouse, "DefaultCovered")
      .withArgs(1n, usdAddress, carol.address, USD(10), USD(10));
    await claim(bobUsd); // set aside for bob (pull payment): he withdraws it
    await expect(clearingHouse.connect(bob).withdrawPayout(usdAddress, bob.address)).to.changeTokenBalances(
      usd,
      [bob, clearingHouse],
      [USD(90), -USD(90)],
    );

    // ETH: both debtors pay (late, which is allowed while uncovered), then alice claims.
    await clearingHouse.connect(bob).payNetDebit(1n, ETH_ASSET, { value: parseEther("3") });
    await expect(clearingHouse.connect(carol).payNetDebit(1n, ETH_ASSET, { value: parseEther("1") }))
      .to.emit(clearingHouse, "CycleFinalized")
      .withArgs(1n);
    await claim(aliceEth);
    await expect(
      clearingHouse.connect(alice).withdrawPayout(ETH_ASSET, alice.address),
    ).to.changeEtherBalances([alice, clearingHouse], [parseEther("4"), -parseEther("4")]);
    await expect(claim(aliceEth)).to.be.revertedWithCustomError(clearingHouse, "CreditAlreadyClaimed");
    expect(await clearingHouse.heldLiquidity(usdAddress)).to.equal(0n);
    expect(await clearingHouse.heldLiquidity(ETH_ASSET)).to.equal(0n);
  });

  it("rejects a debtor's leaf as a claim (debtors are recorded, not proven)", async function () {
    const {
      clearingHouse,
      storedDump,
      plan: p,
      usdAddress,
      alice,
      outsider,
    } = await loadFixture(claimableFixture);
    const tree = loadCycleTree(JSON.parse(storedDump), p.root);
    const [aliceUsd] = participantPositions(tree, alice.address).filter((x) => x.asset === usdAddress);
    expect(aliceUsd.debit).to.equal(USD(60));
    // Her own summary nets to a debit: no credit; her net-position proof is no summary proof.
    const s = p.debitTrees.summaries.find((y) => y.asset === usdAddress && y.debtor === alice.address)!;
    await expect(
      clearingHouse
        .connect(outsider)
        .claimNetCredit(
          1n,
          usdAddress,
          alice.address,
          summaryStruct(s),
          debitSummaryProof(p.debitTrees.tree, s),
        ),
    ).to.be.revertedWithCustomError(clearingHouse, "ZeroCredit");
    await expect(
      clearingHouse
        .connect(outsider)
        .claimNetCredit(
          1n,
          usdAddress,
          alice.address,
          { ...summaryStruct(s), inTotal: USD(60) },
          aliceUsd.proof,
        ),
    ).to.be.revertedWithCustomError(clearingHouse, "InvalidMerkleProof");
  });

  it("commits a net-zero cycle with the placeholder root and marks its V2 ids consumed", async function () {
    const { clearingHouse, vault, operator, people, usdAddress } = await loadFixture(committedFixture);
    const result = net(2n, [
      {
        guaranteeId: gid(20),
        version: 2,
        user: people.alice,
        recipient: people.bob,
        asset: usdAddress,
        amount: 7n,
      },
      {
        guaranteeId: gid(21),
        version: 1,
        user: people.bob,
        recipient: people.alice,
        asset: usdAddress,
        amount: 7n,
      },
      {
        guaranteeId: gid(22),
        version: 2,
        user: people.carol,
        recipient: people.carol,
        asset: ETH_ASSET,
        amount: 1n,
      },
    ]);
    const p = plan(result);
    expect(p.placeholder).to.be.true;
    await expect(clearingHouse.connect(operator).commitCycle(...toCommitCycleCall(p.args)))
      .to.emit(clearingHouse, "CycleCommitted")
      .withArgs(
        2n,
        p.root,
        (x: bigint) => x > 0n,
        (x: bigint) => x > 0n,
        0n,
        0n,
        1n,
      )
      .and.to.emit(clearingHouse, "CycleFinalized")
      .withArgs(2n);
    expect(await vault.consumption(gid(20))).to.equal(NETTED);
    expect(await vault.consumption(gid(22))).to.equal(0n); // a self-payment's id is not listed
  });

  it("a V2 guarantee listed twice is skipped and reported, never consumed twice", async function () {
    const { clearingHouse, vault, operator, people, usdAddress } = await loadFixture(committedFixture);
    const again = [
      {
        guaranteeId: gid(2),
        version: 2 as const,
        user: people.bob,
        recipient: people.carol,
        asset: usdAddress,
        amount: 1n,
      },
      {
        guaranteeId: gid(30),
        version: 1 as const,
        user: people.bob,
        recipient: people.carol,
        asset: usdAddress,
        amount: 1n,
      },
    ];
    const p = plan(net(2n, again));
    await expect(clearingHouse.connect(operator).commitCycle(...toCommitCycleCall(p.args)))
      .to.emit(vault, "GuaranteeNettingSkipped")
      .withArgs(gid(2), NETTED)
      .and.to.emit(clearingHouse, "CycleCommitted");
  });
});
