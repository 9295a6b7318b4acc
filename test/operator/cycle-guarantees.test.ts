/**
 * GET /core/cycles/{id}/guarantees (docs/operator-api.md): a payer takes the leaves and proofs of a cycle
 * Core committed from Core's API alone, on a real chain with a real store and a real HTTP server, and they
 * verify on chain: the contract's own leaf hash, a challenge answered by the keeper with the same leaves,
 * and `proveDoubleListing` against a cycle that re-lists one of them (a leaked operator key's commit).
 */
import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import { expect } from "chai";
import { keccak256, parseEther, ZeroAddress } from "ethers";
import type { AddressInfo } from "node:net";
import { createCoreApp } from "../../operator/api";
import { silentLogger } from "../../operator/logger";
import { NEXT_CUTOFF_KEY } from "../../operator/clearing/scheduler";
import { buildCycleTree } from "../../sdk/merkle";
import {
  buildGuaranteeTree,
  guaranteeLeafHash,
  guaranteeProof,
  type GuaranteeLeaf,
  verifyGuaranteeProof,
} from "../../sdk/guarantee-tree";
import {
  advance,
  chainFixture,
  clearingTasks,
  type CoreHarness,
  issueGuarantee,
  openCore,
} from "./indexer-fixtures";

const ETH = ZeroAddress;
const ONE = parseEther("1");

interface LeafView {
  guarantee_id: string;
  payer: string;
  recipient: string;
  asset_address: string;
  amount: string;
  signature_hash: string;
  leaf_hash: string;
  proof: string[];
}

describe("clearing: a payer's guarantee-tree leaves and proofs from Core's API", function () {
  let h: CoreHarness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  /** GET on Core's app (a real HTTP server on a free port, stopped after the call). */
  async function get(path: string): Promise<{ status: number; body: Record<string, unknown> }> {
    const { app } = createCoreApp({ ...h!.context, logger: silentLogger() });
    const server = app.listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const response = await fetch(base + path);
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  }

  const leafOf = (v: LeafView): GuaranteeLeaf => ({
    guaranteeId: v.guarantee_id,
    payer: v.payer,
    recipient: v.recipient,
    asset: v.asset_address,
    amount: BigInt(v.amount),
    signatureHash: v.signature_hash,
  });

  async function setup() {
    const f = await loadFixture(chainFixture);
    h = await openCore(f);
    const tasks = clearingTasks(h);
    for (const user of [f.alice, f.bob]) await f.vault.connect(user).deposit({ value: ONE });
    await f.clearingHouse.connect(f.admin).postBond(ETH, ONE, { value: ONE });
    await h.indexer.syncToHead();
    await h.syncClock();
    // alice pays bob and carol; bob pays alice (another payer's leaf, not served for alice).
    const toBob = await issueGuarantee(h, f.alice, f.bob.address, ONE / 2n);
    const toCarol = await issueGuarantee(h, f.alice, f.carol.address, ONE / 4n);
    const fromBob = await issueGuarantee(h, f.bob, f.alice.address, ONE / 8n);
    await h.store.operatorState.setOperatorState(NEXT_CUTOFF_KEY, String(h.chainClock.nowSeconds()));
    expect(await tasks.scheduler.tick()).to.include({ action: "committed", cycleId: 1, guarantees: 3 });
    await h.indexer.syncToHead();
    return { f, tasks, toBob, toCarol, fromBob };
  }

  it("serves each leaf of the payer with a proof the ClearingHouse accepts (answer, double listing)", async function () {
    const { f, tasks, toBob, toCarol } = await setup();
    const onChain = await f.clearingHouse.getCycle(1);
    const served = await get(`/core/cycles/1/guarantees?payer=${f.alice.address.toLowerCase()}`);
    expect(served.status).to.equal(200);
    expect(served.body).to.include({
      cycle_id: 1,
      state: "COMMITTED",
      guarantees_root: onChain.guaranteesRoot,
      payer: f.alice.address,
    });
    // A second request is served from the kept tree: the same answer.
    const again = await get(`/core/cycles/1/guarantees?payer=${f.alice.address}`);
    expect(again.body).to.deep.equal(served.body);
    const leaves = served.body.guarantees as LeafView[];
    const expectedIds = [toBob.id, toCarol.id].sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1));
    expect(leaves.map((l) => l.guarantee_id)).to.deep.equal(expectedIds);
    for (const view of leaves) {
      const issued = view.guarantee_id === toBob.id ? toBob : toCarol;
      expect(view).to.include({
        payer: f.alice.address,
        recipient: issued.claims.recipient,
        asset_address: ETH,
        amount: issued.claims.amount.toString(),
        signature_hash: keccak256(issued.payer.signature),
      });
      const leaf = leafOf(view);
      // The contract's leaf hash, the SDK's, and the served one are the same; the proof is under the root.
      const contractHash = await f.clearingHouse.guaranteeLeafHash(
        leaf.guaranteeId,
        leaf.payer,
        leaf.recipient,
        leaf.asset,
        leaf.amount,
        leaf.signatureHash,
      );
      expect([view.leaf_hash, guaranteeLeafHash(leaf)]).to.deep.equal([contractHash, contractHash]);
      expect(verifyGuaranteeProof(onChain.guaranteesRoot, leaf, view.proof)).to.equal(true);
    }

    // alice's debit (0.75 − 0.125 ETH) is what her served leaves justify; she disputes its first guarantee anyway, and
    // the keeper answers with that same signed guarantee.
    await f.clearingHouse.connect(f.alice).disputeGuarantee(1, ETH, 0);
    await h!.indexer.syncToHead();
    const tick = await tasks.keeper.tick();
    expect(tick.answered.map((a) => a.debtor)).to.deep.equal([f.alice.address]);
    await h!.indexer.syncToHead();
    expect((await f.clearingHouse.debtOf(1, ETH, f.alice.address)).status).to.equal(5n); // Answered

    // The operator key, outside Core, lists alice's guarantee to bob again in cycle 2.
    const relisted = leafOf(leaves.find((l) => l.guarantee_id === toBob.id)!);
    const padding: GuaranteeLeaf = { ...relisted, guaranteeId: keccak256("0x01"), recipient: f.dave.address };
    const foreignTree = buildGuaranteeTree([relisted, padding]);
    const positions = buildCycleTree([
      { cycleId: 2n, asset: ETH, participant: f.alice.address, debit: ONE / 2n, credit: 0n },
      { cycleId: 2n, asset: ETH, participant: f.bob.address, debit: 0n, credit: ONE / 2n },
    ]);
    await f.clearingHouse.connect(f.operator).commitCycle(
      2,
      {
        root: positions.root,
        guaranteesRoot: foreignTree.root,
        debitsRoot: "0xdddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd",
      },
      [{ asset: ETH, totalDebit: ONE / 2n, totalCredit: ONE / 2n }],
      [{ asset: ETH, debtor: f.alice.address, amount: ONE / 2n }],
      [],
    );
    await h!.indexer.syncToHead();
    // Core serves no tree of a cycle it did not plan.
    const foreign = await get(`/core/cycles/2/guarantees?payer=${f.alice.address}`);
    expect([foreign.status, foreign.body.code]).to.deep.equal([404, "guarantees_not_available"]);

    const second = await f.clearingHouse.getCycle(2);
    await advance(h!, Number(second.challengeDeadline) - h!.chainClock.nowSeconds() + 1);
    const firstProof = leaves.find((l) => l.guarantee_id === toBob.id)!.proof;
    await expect(
      f.clearingHouse
        .connect(f.alice)
        .proveDoubleListing(1, 2, relisted, relisted, firstProof, guaranteeProof(foreignTree, relisted)),
    )
      .to.emit(f.clearingHouse, "DoubleListingProven")
      .withArgs(toBob.id, f.alice.address, ETH, 1n, 2n, ONE / 2n);
  });

  it("answers an unknown payer with no leaves, and malformed input with 4xx naming the problem", async function () {
    const { f } = await setup();
    const none = await get(`/core/cycles/1/guarantees?payer=${f.dave.address}`);
    expect(none.status).to.equal(200);
    expect(none.body.guarantees).to.deep.equal([]);

    const missing = await get("/core/cycles/1/guarantees");
    expect([missing.status, missing.body.code]).to.deep.equal([400, "invalid_request"]);
    expect(String(missing.body.error)).to.match(/payer/);
    const malformed = await get("/core/cycles/1/guarantees?payer=0x12");
    expect([malformed.status, malformed.body.code]).to.deep.equal([400, "invalid_request"]);
    expect(String(malformed.body.error)).to.match(/payer/);
    const twice = await get(`/core/cycles/1/guarantees?payer=${f.alice.address}&payer=${f.bob.address}`);
    expect([twice.status, twice.body.code]).to.deep.equal([400, "invalid_request"]);
    expect(String(twice.body.error)).to.match(/payer/);
    const badId = await get(`/core/cycles/x/guarantees?payer=${f.alice.address}`);
    expect([badId.status, badId.body.code]).to.deep.equal([400, "invalid_request"]);
    const unknown = await get(`/core/cycles/9/guarantees?payer=${f.alice.address}`);
    expect([unknown.status, unknown.body.code]).to.deep.equal([404, "cycle_not_found"]);
  });
});
