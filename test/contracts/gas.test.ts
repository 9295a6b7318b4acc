/**
 * Gas of the main calls, measured on receipts (docs/gas.md is written from this output). Run with
 * REPORT_GAS=1 for hardhat-gas-reporter's per-method table as well.
 */
import { loadFixture, time } from "@nomicfoundation/hardhat-network-helpers";
import { expect } from "chai";
import hre, { ethers } from "hardhat";
import { publicKeyToEip2537 } from "../../sdk/bls";
import { ValidationRegistry__factory } from "../../typechain-types";
import { ZeroHash, id as hashText, parseEther, type ContractTransactionResponse } from "ethers";

import { guaranteeLeafOf, toCommitCycleCall } from "../../operator/clearing/commit-plan";
import type { GuaranteeClaimsV1 } from "../../sdk/claims";
import { encodeCertificateClaims } from "../../sdk/certificate";
import { signGuarantee } from "../../sdk/eip712";
import { guaranteeId as sdkGuaranteeId } from "../../sdk/ids";
import { guaranteeLeafHash, guaranteeProof } from "../../sdk";
import { SummariesTree, NO_CREDIT_PROOF, sumParent, summaryStruct, type SumNode } from "../../sdk/debit-tree";
import {
  ETH,
  OTHER_BLS,
  buildCycle,
  GUARANTEES_ROOT,
  PAYMENT_DELAY,
  planCycle,
  type Position,
  remunerateArgs,
  signClaims,
  signedGuarantee,
  type SignedTestGuarantee,
  suretyFixture,
  TIMINGS,
  transfer,
  v2Certificate,
  commitPlanned,
  creditProofOf,
  disputeAnswerOf,
  listedCreditProof,
  positionOf,
  validatedV2Fixture,
  validatedV2Guarantee,
} from "./helpers";

const ONE = parseEther("1");
const USD = 1_000_000n;
const measured: Array<[string, bigint]> = [];

async function gasOf(label: string, tx: Promise<ContractTransactionResponse>): Promise<bigint> {
  const receipt = await (await tx).wait();
  if (!receipt) throw new Error(`${label}: no receipt`);
  measured.push([label, receipt.gasUsed]);
  return receipt.gasUsed;
}

/**
 * A sum tree of `count` leaves of 1 ETH each: `leafHash` at position 0, one filler hash elsewhere, empty
 * positions up to the next power of two. Built in O(depth²): identical filler subtrees are computed once.
 */
function syntheticTree(leafHash: string, count: number) {
  let depth = 0;
  while (1 << depth < count) depth++;
  const fillerHash = hashText("filler leaf");
  const EMPTY: SumNode = { hash: ethers.ZeroHash, sum: 0n };
  const full = [{ hash: fillerHash, sum: ONE }];
  for (let h = 1; h <= depth; h++) full.push(sumParent(full[h - 1], full[h - 1]));
  // The node over positions [start, start + 2^height) where position 0 is the real leaf.
  const nodeAt = (start: number, height: number): SumNode => {
    const size = 2 ** height;
    if (start >= count) return EMPTY;
    if (start > 0 && start + size <= count) return full[height];
    if (height === 0) return start === 0 ? { hash: leafHash, sum: ONE } : full[0];
    return sumParent(nodeAt(start, height - 1), nodeAt(start + size / 2, height - 1));
  };
  const path = (index: number): SumNode[] =>
    Array.from({ length: depth }, (_, level) => nodeAt(((index >> level) ^ 1) << level, level));
  return { depth, root: nodeAt(0, depth), leafHash, fillerHash, path };
}

/** n participants in ETH: n/2 debtors owing 1 wei-scaled unit each, n/2 creditors owed the same. */
function cycleOf(cycleId: number, n: number) {
  const positions: Position[] = [];
  for (let i = 0; i < n / 2; i++) {
    const payer = ethers.Wallet.createRandom().address;
    const payee = ethers.Wallet.createRandom().address;
    positions.push(...transfer(ETH, payer, payee, BigInt(i + 1) * ONE));
  }
  return buildCycle(cycleId, positions);
}

describe("Gas", () => {
  after(() => {
    console.log("\n      | Operation | Gas used |\n      | --- | ---: |");
    for (const [label, gas] of measured) console.log(`      | ${label} | ${gas.toLocaleString("en-US")} |`);
  });

  it("collateral: deposit, depositToken, requestWithdrawal, finalizeWithdrawal", async () => {
    const { vault, alice, usdAddress } = await loadFixture(suretyFixture);
    await gasOf("deposit (ETH, first)", vault.connect(alice).deposit({ value: ONE }));
    await gasOf("deposit (ETH, again)", vault.connect(alice).deposit({ value: ONE }));
    await gasOf("depositToken (first)", vault.connect(alice).depositToken(usdAddress, 100n * USD));
    await gasOf("depositToken (again)", vault.connect(alice).depositToken(usdAddress, 100n * USD));
    await gasOf("requestWithdrawal", vault.connect(alice).requestWithdrawal(ETH, ONE));
    await time.increase(TIMINGS.withdrawalGracePeriod);
    await gasOf("finalizeWithdrawal (ETH)", vault.connect(alice).finalizeWithdrawal(ETH));
    await vault.connect(alice).requestWithdrawal(usdAddress, 100n * USD);
    await time.increase(TIMINGS.withdrawalGracePeriod);
    await gasOf("finalizeWithdrawal (token)", vault.connect(alice).finalizeWithdrawal(usdAddress));
  });

  it("remunerate (V2 certificate, BLS pairing + hash-to-G2 on chain)", async () => {
    const f = await loadFixture(suretyFixture);
    await f.vault.connect(f.alice).deposit({ value: 10n * ONE });
    const policy = {
      registry: f.registryAddress,
      validator: f.validator.address,
      agentId: 1n,
      minScore: 50,
      jobHash: hashText("job"),
      tag: "delivery",
      deadline: BigInt((await time.latest()) + 3600),
    };
    const cert = v2Certificate({
      chainId: f.chainId,
      vault: f.vaultAddress,
      user: f.alice.address,
      recipient: f.bob.address,
      reqId: 1n,
      amount: ONE,
      asset: ETH,
      policy,
    });
    await gasOf(
      "ValidationRegistry.validationRequest",
      f.validationRegistry
        .connect(f.bob)
        .validationRequest(f.validator.address, 1n, "ipfs://job", cert.requestHash),
    );
    await gasOf(
      "ValidationRegistry.validationResponse",
      f.validationRegistry
        .connect(f.validator)
        .validationResponse(cert.requestHash, 90, "ipfs://r", hashText("e"), "delivery"),
    );
    const gas = await gasOf("remunerate (ETH)", f.vault.remunerate(...remunerateArgs(cert)));
    // issue 25: remunerate stayed ≤ 235k; audit2 A2-I2 reads the pin first (+2.1k, one cold slot), so the
    // bound is 236k (docs/gas.md); not under `npm run coverage`, whose instrumented contracts cost more gas
    // (solidity-coverage sets this flag on the runtime environment).
    const coverage = (hre as { __SOLIDITY_COVERAGE_RUNNING?: boolean }).__SOLIDITY_COVERAGE_RUNNING === true;
    if (!coverage) expect(gas).to.be.at.most(236_000n);
  });

  it("pinVerdicts (audit H-2): one verdict, batches of 16 and 64; the batch bound under 2^24", async () => {
    const f = await loadFixture(suretyFixture);
    const deadline = BigInt((await time.latest()) + 3600);
    const claimsOf = async (count: number, from: number) => {
      const out: string[] = [];
      for (let i = 0; i < count; i++) {
        const cert = v2Certificate({
          chainId: f.chainId,
          vault: f.vaultAddress,
          user: f.alice.address,
          recipient: f.bob.address,
          reqId: BigInt(1000 + from + i),
          amount: ONE,
          asset: ETH,
          policy: {
            registry: f.registryAddress,
            validator: f.validator.address,
            agentId: 1n,
            minScore: 50,
            jobHash: hashText("job"),
            tag: "delivery",
            deadline,
          },
        });
        await f.validationRegistry
          .connect(f.bob)
          .validationRequest(f.validator.address, 1n, "", cert.requestHash);
        await f.validationRegistry
          .connect(f.validator)
          .validationResponse(cert.requestHash, 90, "", hashText("e"), "delivery");
        out.push(cert.claims);
      }
      return out;
    };
    const one = await claimsOf(1, 0);
    const sixteen = await claimsOf(16, 1);
    const sixtyFour = await claimsOf(64, 17);
    await time.increaseTo(deadline + 1n);
    const single = await gasOf("pinVerdicts (1 verdict)", f.vault.pinVerdicts(one));
    const g16 = await gasOf("pinVerdicts (16 verdicts)", f.vault.pinVerdicts(sixteen));
    const g64 = await gasOf("pinVerdicts (64 verdicts)", f.vault.pinVerdicts(sixtyFour));
    await gasOf("pinVerdicts (64 verdicts already pinned: skipped)", f.vault.pinVerdicts(sixtyFour));
    const perVerdict = (g64 - g16) / 48n;
    const bound = (2n ** 24n - (g16 - 16n * perVerdict)) / perVerdict;
    console.log(`      pinVerdicts: ${perVerdict} gas per verdict in a batch; ${bound} fit under 2^24`);
    // operator/lifecycle/v2-lifecycle.ts caps a batch at MAX_PIN_BATCH (256); keep it under 2^24 with margin.
    expect(single).to.be.greaterThan(0n);
    expect(256n * perVerdict + (g16 - 16n * perVerdict)).to.be.lessThan(2n ** 24n);
  });

  it("seller's reserve: registerReserve, remunerate out of the reserve, releaseReserve", async () => {
    const f = await loadFixture(suretyFixture);
    await f.vault.connect(f.alice).deposit({ value: 2n * ONE });
    const policy = {
      registry: f.registryAddress,
      validator: f.validator.address,
      agentId: 1n,
      minScore: 50,
      jobHash: hashText("job"),
      tag: "delivery",
      deadline: BigInt((await time.latest()) + 3600),
    };
    const certFor = (reqId: bigint) =>
      v2Certificate({
        chainId: f.chainId,
        vault: f.vaultAddress,
        user: f.alice.address,
        recipient: f.bob.address,
        reqId,
        amount: ONE,
        asset: ETH,
        policy,
      });
    const [first, second] = [certFor(1n), certFor(2n)];
    await gasOf(
      "registerReserve (ETH, first reserve of the payer)",
      f.vault.registerReserve(...remunerateArgs(first)),
    );
    await gasOf("registerReserve (ETH, second)", f.vault.registerReserve(...remunerateArgs(second)));
    for (const cert of [first, second]) {
      await f.validationRegistry
        .connect(f.bob)
        .validationRequest(f.validator.address, 1n, "", cert.requestHash);
      await f.validationRegistry
        .connect(f.validator)
        .validationResponse(cert.requestHash, 90, "", hashText("e"), "delivery");
    }
    await f.vault.connect(f.alice).requestWithdrawal(ETH, 2n * ONE);
    await gasOf(
      "remunerate (ETH, out of its reserve: free collateral short)",
      f.vault.remunerate(...remunerateArgs(first)),
    );
    await time.increase(
      policy.deadline - BigInt(await time.latest()) + (await f.vault.timings()).withdrawalGracePeriod,
    );
    await gasOf("releaseReserve (expired)", f.vault.releaseReserve(second.guaranteeId));
  });

  it("seller's V1 reserve: registerReserve (V1), releaseListedReserve, releaseReserve (marked), collectReserve", async () => {
    const f = await loadFixture(suretyFixture);
    await f.vault.connect(f.alice).deposit({ value: 10n * ONE });
    const deployment = { chainId: f.chainId, vault: f.vaultAddress };
    const domain = { name: "Surety", version: "1", chainId: f.chainId, verifyingContract: f.vaultAddress };
    const now = await time.latest();
    const issue = async (reqId: bigint): Promise<SignedTestGuarantee> => {
      const claims: GuaranteeClaimsV1 = {
        version: 1,
        user: f.alice.address,
        recipient: f.bob.address,
        reqId,
        amount: ONE,
        asset: ETH,
        timestamp: now,
      };
      const signature = await signGuarantee(f.alice, domain, claims, "eip712");
      return {
        payable: {
          guaranteeId: sdkGuaranteeId(deployment, f.alice.address, reqId),
          version: 1,
          user: f.alice.address,
          recipient: f.bob.address,
          asset: ETH,
          amount: ONE,
          signature,
        },
        claims: encodeCertificateClaims(claims, deployment),
        scheme: "eip712",
        signature,
      };
    };
    const [proven, marked, collected] = [await issue(1n), await issue(2n), await issue(3n)];
    const register = (g: SignedTestGuarantee) =>
      f.vault.registerReserve(g.claims, signClaims(g.claims), 0, g.signature);
    await gasOf("registerReserve (V1, ETH, first reserve of the payer)", register(proven));
    await gasOf("registerReserve (V1, ETH, second)", register(marked));
    await register(collected);
    const plan = planCycle(1n, [proven, marked]);
    await f.clearingHouse
      .connect(f.operator)
      .commitCycle(...toCommitCycleCall({ ...plan.args, nettedV2Ids: [marked.payable.guaranteeId] }));
    await time.increaseTo((await f.clearingHouse.getCycle(1n)).challengeDeadline + 1n);
    const leaf = guaranteeLeafOf(proven.payable);
    await gasOf(
      "releaseListedReserve (V1, 1-level proof)",
      f.vault.releaseListedReserve(
        proven.payable.guaranteeId,
        1n,
        leaf.signatureHash,
        listedCreditProof(plan, leaf),
      ),
    );
    const markedLeaf = guaranteeLeafOf(marked.payable);
    await gasOf(
      "releaseListedReserve (V1, marked netted by the commit: the mark alone releases nothing)",
      f.vault.releaseListedReserve(
        marked.payable.guaranteeId,
        1n,
        markedLeaf.signatureHash,
        listedCreditProof(plan, markedLeaf),
      ),
    );
    await time.increaseTo((await f.vault.reserveOf(collected.payable.guaranteeId)).expiresAt);
    await gasOf("collectReserve (V1, ETH)", f.vault.collectReserve(collected.payable.guaranteeId));
  });

  it("timelocked changes: role grant, operator key, trusted registry, timings", async () => {
    const f = await loadFixture(suretyFixture);
    const role = await f.clearingHouse.OPERATOR_ROLE();
    const delay = await f.vault.timelockDelay();
    await gasOf("scheduleRoleGrant", f.clearingHouse.scheduleRoleGrant(role, f.carol.address));
    const key = publicKeyToEip2537(OTHER_BLS.publicKey);
    await gasOf("setOperatorKey (after setup: schedules)", f.vault.setOperatorKey(key));
    const registry = await (await new ValidationRegistry__factory(f.admin).deploy()).getAddress();
    await gasOf("setTrustedRegistry (after setup: schedules)", f.vault.setTrustedRegistry(registry, true));
    const timings = { ...TIMINGS, confirmationLag: 2 };
    await gasOf("setTimings (after setup: schedules)", f.vault.setTimings(timings));
    await time.increase(delay);
    await gasOf("executeRoleGrant", f.clearingHouse.executeRoleGrant(role, f.carol.address));
    await gasOf("setOperatorKey (executes the scheduled key)", f.vault.setOperatorKey(key));
    await gasOf("setTrustedRegistry (executes)", f.vault.setTrustedRegistry(registry, true));
    await gasOf("setTimings (executes the scheduled timings)", f.vault.setTimings(timings));
    await gasOf("revokeOperatorKey", f.vault.revokeOperatorKey());
    // The guardian of schedules: the default admin cancels one (here a second timings change).
    const unwanted = { ...TIMINGS, challengeWindow: 1 };
    const scheduled = await (await f.vault.setTimings(unwanted)).wait();
    const operation = f.vault.interface.parseLog(scheduled!.logs[0])!.args.operation as string;
    await gasOf("cancelOperation", f.vault.cancelOperation(operation));
  });

  for (const n of [2, 10, 100]) {
    it(`commitCycle with ${n} participants`, async () => {
      const { clearingHouse, operator } = await loadFixture(suretyFixture);
      const c = cycleOf(1, n);
      await gasOf(
        `commitCycle (${n} participants, ${n / 2} debtors, 1 asset)`,
        clearingHouse.connect(operator).commitCycle(
          1,
          {
            root: c.root,
            guaranteesRoot: GUARANTEES_ROOT,
            debitsRoot: c.debitsRoot,
          },
          c.totals,
          c.debtors,
          [],
        ),
      );
    });
  }

  it("commitCycle marking 10 netted V2 ids, then listing them again (skipped)", async () => {
    const { clearingHouse, operator } = await loadFixture(suretyFixture);
    const c = cycleOf(1, 2);
    const ids = Array.from({ length: 10 }, (_, i) => hashText(`g${i}`));
    await gasOf(
      "commitCycle (2 participants + 10 netted V2 ids)",
      clearingHouse.connect(operator).commitCycle(
        1,
        {
          root: c.root,
          guaranteesRoot: GUARANTEES_ROOT,
          debitsRoot: c.debitsRoot,
        },
        c.totals,
        c.debtors,
        ids,
      ),
    );
    const again = cycleOf(2, 2);
    await gasOf(
      "commitCycle (2 participants + 10 V2 ids already consumed: skipped)",
      clearingHouse.connect(operator).commitCycle(
        2,
        {
          root: again.root,
          guaranteesRoot: GUARANTEES_ROOT,
          debitsRoot: again.debitsRoot,
        },
        again.totals,
        again.debtors,
        ids,
      ),
    );
  });

  it("payNetDebit, claimNetCredit, coverDefault, withdrawPayout", async () => {
    const f = await loadFixture(suretyFixture);
    const { vault, clearingHouse, operator, alice, bob, carol, dave, usdAddress } = f;
    await vault.connect(carol).deposit({ value: 10n * ONE });
    await vault.connect(dave).depositToken(usdAddress, 500n * USD);
    const positions: Position[] = [
      ...transfer(ETH, alice.address, bob.address, ONE),
      ...transfer(usdAddress, bob.address, alice.address, 10n * USD),
      { asset: ETH, participant: carol.address, debit: ONE, credit: 0n },
      { asset: ETH, participant: f.outsider.address, debit: 0n, credit: ONE },
      ...transfer(usdAddress, dave.address, carol.address, 20n * USD),
    ];
    const c = buildCycle(1, positions);
    await clearingHouse.connect(operator).commitCycle(
      1,
      {
        root: c.root,
        guaranteesRoot: GUARANTEES_ROOT,
        debitsRoot: c.debitsRoot,
      },
      c.totals,
      c.debtors,
      [],
    );
    await gasOf("payNetDebit (ETH)", clearingHouse.connect(alice).payNetDebit(1, ETH, { value: ONE }));
    await gasOf("payNetDebit (token)", clearingHouse.connect(bob).payNetDebit(1, usdAddress));
    await time.increase(PAYMENT_DELAY + 1);
    await gasOf("coverDefault (ETH)", clearingHouse.coverDefault(1, ETH, carol.address));
    await gasOf(
      "coverDefault (token, finalizes cycle)",
      clearingHouse.coverDefault(1, usdAddress, dave.address),
    );
    await gasOf(
      "claimNetCredit (ETH, 8-leaf tree)",
      clearingHouse.claimNetCredit(1, ETH, bob.address, ...c.claimOf(ETH, bob.address)),
    );
    await gasOf(
      "claimNetCredit (token, 8-leaf tree)",
      clearingHouse.claimNetCredit(1, usdAddress, alice.address, ...c.claimOf(usdAddress, alice.address)),
    );
    await gasOf(
      "withdrawPayout (ETH, a claimed credit)",
      clearingHouse.connect(bob).withdrawPayout(ETH, bob.address),
    );
    await gasOf(
      "withdrawPayout (token, a claimed credit)",
      clearingHouse.connect(alice).withdrawPayout(usdAddress, alice.address),
    );
  });

  // The dispute game: one position of a debtor's tree, whatever its size (issue 25, item 2). The disputed
  // position holds a real signed and certified guarantee; the others are filler leaves (the chain sees only
  // hashes and sums on the path, so the cost is the same as with real ones).
  for (const count of [1, 100, 10_000, 1_000_000]) {
    it(`dispute game: disputeGuarantee, answerDispute, a concession, with ${count} guarantee(s) of the payer`, async () => {
      const f = await loadFixture(suretyFixture);
      await f.vault.connect(f.alice).deposit({ value: 10n * ONE });
      await f.clearingHouse.connect(f.admin).postBond(ETH, 0, { value: 10n * ONE });
      const real = await signedGuarantee(f, f.alice, f.bob.address, 1n, ONE);
      const tree = syntheticTree(guaranteeLeafHash(guaranteeLeafOf(real.payable)), count);
      const summary = {
        debtor: f.alice.address,
        asset: ETH,
        sumRoot: tree.root.hash,
        total: tree.root.sum,
        depth: tree.depth,
        inRoot: ZeroHash,
        inTotal: 0n,
        inDepth: 0,
      };
      // bob's incoming tree: the same guarantees (the answer proves the position there too).
      const bobs = {
        debtor: f.bob.address,
        asset: ETH,
        sumRoot: ZeroHash,
        total: 0n,
        depth: 0,
        inRoot: tree.root.hash,
        inTotal: tree.root.sum,
        inDepth: tree.depth,
      };
      // 63 other debtors' summaries make a realistic debitsRoot (65 summaries in ETH: a 7-level sum proof).
      const others = Array.from({ length: 63 }, (_, i) => ({
        ...summary,
        debtor: ethers.Wallet.createRandom().address,
        sumRoot: hashText(`s${i}`),
      }));
      const debits = new SummariesTree([summary, bobs, ...others]);
      const c = buildCycle(1, transfer(ETH, f.alice.address, f.bob.address, tree.root.sum));
      await f.clearingHouse
        .connect(f.operator)
        .commitCycle(
          1,
          { root: c.root, guaranteesRoot: GUARANTEES_ROOT, debitsRoot: debits.root },
          c.totals,
          c.debtors,
          [],
        );
      const base = {
        summary: summaryStruct(summary),
        summaryProof: debits.proof(summary),
        credit: NO_CREDIT_PROOF,
      };
      await gasOf(
        `revealSummary (${count}; the recipient, a net creditor, before disputing its own tree)`,
        f.clearingHouse.revealSummary(1, ETH, f.bob.address, summaryStruct(bobs), debits.proof(bobs)),
      );
      await gasOf(
        `disputeGuarantee (${count})`,
        f.clearingHouse.connect(f.alice).disputeGuarantee(1, ETH, 0),
      );
      await gasOf(
        `answerDispute (${count}; first answer: reveals the summary; EIP-712, certified V1)`,
        f.clearingHouse.connect(f.operator).answerDispute(1, ETH, f.alice.address, 0, {
          ...base,
          leaf: { hash: tree.leafHash, sum: ONE },
          path: tree.path(0),
          claims: real.claims,
          certificate: signClaims(real.claims),
          scheme: 0,
          signature: real.signature,
          finalization: "0x",
          credit: {
            summary: summaryStruct(bobs),
            summaryProof: debits.proof(bobs),
            index: 0n,
            path: tree.path(0),
          },
        }),
      );
      if (count > 1) {
        await f.clearingHouse.connect(f.alice).disputeGuarantee(1, ETH, 1);
        await gasOf(
          `answerDispute (${count}; conceded: 1 ETH off the debit, against the bond)`,
          f.clearingHouse.connect(f.operator).answerDispute(1, ETH, f.alice.address, 1, {
            ...base,
            leaf: { hash: tree.fillerHash, sum: ONE },
            path: tree.path(1),
            claims: "0x",
            certificate: signClaims(real.claims),
            scheme: 0,
            signature: "0x",
            finalization: "0x",
          }),
        );
      }
      // After the reveal only positions inside the tree can be disputed (audit M-1): a 1-guarantee tree has
      // none left.
      if (count === 1) return;
      await f.clearingHouse.connect(f.alice).disputeGuarantee(1, ETH, 2);
      await f.clearingHouse.connect(f.alice).disputeGuarantee(1, ETH, 3);
      await time.increase(2 * TIMINGS.challengeWindow + 1);
      await gasOf(
        `voidUnansweredPosition (${count}; a missed position conceded at its proven amount)`,
        f.clearingHouse.voidUnansweredPosition(
          1,
          ETH,
          f.alice.address,
          2,
          { hash: tree.fillerHash, sum: ONE },
          tree.path(2),
        ),
      );
      await time.increase(TIMINGS.paymentWindow);
      await gasOf(
        `voidUnansweredDebit (${count}; revealed, after the payment deadline: concedes the unanswered rest)`,
        f.clearingHouse.voidUnansweredDebit(1, ETH, f.alice.address),
      );
    });
  }

  for (const count of [1, 100, 10_000, 1_000_000]) {
    it(`recipient's credit dispute: disputeCredit, answerCreditDispute, payUnansweredCredit, ${count} guarantee(s)`, async () => {
      const f = await loadFixture(suretyFixture);
      await f.vault.connect(f.alice).deposit({ value: 10n * ONE });
      await f.clearingHouse.connect(f.admin).postBond(ETH, 0, { value: 10n * ONE });
      const real = await signedGuarantee(f, f.alice, f.bob.address, 1n, ONE);
      const tree = syntheticTree(guaranteeLeafHash(guaranteeLeafOf(real.payable)), count);
      const side = (account: string, out: boolean) => ({
        debtor: account,
        asset: ETH,
        sumRoot: out ? tree.root.hash : ZeroHash,
        total: out ? tree.root.sum : 0n,
        depth: out ? tree.depth : 0,
        inRoot: out ? ZeroHash : tree.root.hash,
        inTotal: out ? 0n : tree.root.sum,
        inDepth: out ? 0 : tree.depth,
      });
      const alices = side(f.alice.address, true);
      const bobs = side(f.bob.address, false); // as deep as the payer's: the worst case
      const others = Array.from({ length: 63 }, (_, i) => ({
        ...alices,
        debtor: ethers.Wallet.createRandom().address,
        sumRoot: hashText(`s${i}`),
      }));
      const debits = new SummariesTree([alices, bobs, ...others]);
      const c = buildCycle(1, transfer(ETH, f.alice.address, f.bob.address, tree.root.sum));
      await f.clearingHouse
        .connect(f.operator)
        .commitCycle(
          1,
          { root: c.root, guaranteesRoot: GUARANTEES_ROOT, debitsRoot: debits.root },
          c.totals,
          c.debtors,
          [],
        );
      await gasOf(
        `disputeCredit (${count}; payer's summary + sum path, BLS certificate, payer signature)`,
        f.clearingHouse.connect(f.bob).disputeCredit(1, ETH, f.alice.address, {
          summary: summaryStruct(alices),
          summaryProof: debits.proof(alices),
          index: 0n,
          path: tree.path(0),
          claims: real.claims,
          certificate: signClaims(real.claims),
          scheme: 0,
          signature: real.signature,
          finalization: "0x",
        }),
      );
      const id = real.payable.guaranteeId;
      const snapshot = await ethers.provider.send("evm_snapshot", []);
      await gasOf(
        `answerCreditDispute (${count}; the recipient's credit proof)`,
        f.clearingHouse.answerCreditDispute(1, id, {
          summary: summaryStruct(bobs),
          summaryProof: debits.proof(bobs),
          index: 0n,
          path: tree.path(0),
        }),
      );
      await ethers.provider.send("evm_revert", [snapshot]);
      await time.increase(PAYMENT_DELAY);
      await gasOf(`payUnansweredCredit (${count})`, f.clearingHouse.payUnansweredCredit(1, id));
    });
  }

  it("double listing: proveDoubleListing, claimOwedRefund, withdrawPayout", async () => {
    const f = await loadFixture(suretyFixture);
    await f.vault.connect(f.alice).deposit({ value: 10n * ONE });
    await f.clearingHouse.connect(f.admin).postBond(ETH, 0, { value: ONE / 64n }); // one refund's worth
    // 64 guarantees of alice per cycle (6-level proofs), the first listed in both cycles.
    const signed: SignedTestGuarantee[] = [];
    for (let i = 0; i < 64; i++) {
      signed.push(await signedGuarantee(f, f.alice, f.bob.address, BigInt(i + 1), ONE / 64n));
    }
    const again: SignedTestGuarantee[] = [signed[0]];
    for (let i = 0; i < 63; i++) {
      again.push(await signedGuarantee(f, f.alice, f.bob.address, BigInt(1000 + i), ONE / 64n));
    }
    const c1 = planCycle(1n, signed);
    const c2 = planCycle(2n, again);
    for (const c of [c1, c2]) {
      await f.clearingHouse
        .connect(f.operator)
        .commitCycle(
          c.args.cycleId,
          { root: c.root, guaranteesRoot: c.args.guaranteesRoot, debitsRoot: c.args.debitsRoot },
          c.args.totals,
          c.args.debtors,
          [],
        );
    }
    await time.increase(TIMINGS.challengeWindow + 1);
    const leaf = guaranteeLeafOf(signed[0].payable);
    const proofs = [c1, c2].map((c) => guaranteeProof(c.guaranteeTree, leaf));
    await gasOf(
      "proveDoubleListing (ETH refund, two 6-level proofs)",
      f.clearingHouse.connect(f.alice).proveDoubleListing(1, 2, leaf, leaf, proofs[0], proofs[1]),
    );
    const other = guaranteeLeafOf(again[1].payable);
    const c3 = planCycle(3n, [again[1]]);
    await f.clearingHouse
      .connect(f.operator)
      .commitCycle(
        3,
        { root: c3.root, guaranteesRoot: c3.args.guaranteesRoot, debitsRoot: c3.args.debitsRoot },
        c3.args.totals,
        c3.args.debtors,
        [],
      );
    await time.increase(TIMINGS.challengeWindow + 1);
    await gasOf(
      "proveDoubleListing (bond empty: refund owed)",
      f.clearingHouse
        .connect(f.alice)
        .proveDoubleListing(2, 3, other, other, guaranteeProof(c2.guaranteeTree, other), []),
    );
    await f.clearingHouse.connect(f.admin).postBond(ETH, 0, { value: ONE });
    await gasOf("claimOwedRefund (ETH, set aside)", f.clearingHouse.claimOwedRefund(ETH, f.alice.address));
    expect(await f.clearingHouse.totalRefundOwed(ETH)).to.equal(0n);
    await gasOf(
      "withdrawPayout (ETH, to the payer)",
      f.clearingHouse.connect(f.alice).withdrawPayout(ETH, f.alice.address),
    );
  });

  it("bond floor: commitCycle with the floor on, setBondFloor", async () => {
    const f = await loadFixture(suretyFixture);
    await f.vault.connect(f.alice).deposit({ value: 10n * ONE });
    await f.clearingHouse.connect(f.admin).postBond(ETH, 0, { value: ONE });
    await gasOf("setBondFloor", f.clearingHouse.connect(f.admin).setBondFloor(5_000));
    const c = planCycle(1n, [await signedGuarantee(f, f.alice, f.bob.address, 1n, ONE)]);
    await gasOf(
      "commitCycle (1 debtor, bond floor on)",
      f.clearingHouse
        .connect(f.operator)
        .commitCycle(
          c.args.cycleId,
          { root: c.root, guaranteesRoot: c.args.guaranteesRoot, debitsRoot: c.args.debitsRoot },
          c.args.totals,
          c.args.debtors,
          [],
        ),
    );
  });

  it("bond floor off: the same commit", async () => {
    const f = await loadFixture(suretyFixture);
    await f.vault.connect(f.alice).deposit({ value: 10n * ONE });
    await f.clearingHouse.connect(f.admin).postBond(ETH, 0, { value: ONE });
    const c = planCycle(1n, [await signedGuarantee(f, f.alice, f.bob.address, 1n, ONE)]);
    await gasOf(
      "commitCycle (1 debtor, bond floor off)",
      f.clearingHouse
        .connect(f.operator)
        .commitCycle(
          c.args.cycleId,
          { root: c.root, guaranteesRoot: c.args.guaranteesRoot, debitsRoot: c.args.debitsRoot },
          c.args.totals,
          c.args.debtors,
          [],
        ),
    );
  });

  it("challenge game: voidUnansweredDebit, vetoCycle, releaseVetoedDebt, postBond, withdrawBond", async () => {
    const f = await loadFixture(suretyFixture);
    await f.vault.connect(f.alice).deposit({ value: 10n * ONE });
    await gasOf(
      "postBond (ETH, first)",
      f.clearingHouse.connect(f.admin).postBond(ETH, 0, { value: 10n * ONE }),
    );
    const c1 = buildCycle(1, transfer(ETH, f.alice.address, f.bob.address, ONE));
    await f.clearingHouse.connect(f.operator).commitCycle(
      1,
      {
        root: c1.root,
        guaranteesRoot: GUARANTEES_ROOT,
        debitsRoot: c1.debitsRoot,
      },
      c1.totals,
      c1.debtors,
      [],
    );
    await f.clearingHouse.connect(f.alice).disputeGuarantee(1, ETH, 0);
    const c2 = buildCycle(2, [
      ...transfer(ETH, f.alice.address, f.bob.address, ONE),
      ...transfer(ETH, f.carol.address, f.dave.address, ONE),
    ]);
    await f.clearingHouse.connect(f.operator).commitCycle(
      2,
      {
        root: c2.root,
        guaranteesRoot: GUARANTEES_ROOT,
        debitsRoot: c2.debitsRoot,
      },
      c2.totals,
      c2.debtors,
      [],
    );
    await f.clearingHouse.connect(f.carol).payNetDebit(2, ETH, { value: ONE });
    await gasOf("vetoCycle", f.clearingHouse.connect(f.guardian).vetoCycle(2));
    await gasOf(
      "releaseVetoedDebt (paid: refund set aside)",
      f.clearingHouse.releaseVetoedDebt(2, ETH, f.carol.address),
    );
    await gasOf(
      "withdrawPayout (ETH, a vetoed debt's refund)",
      f.clearingHouse.connect(f.carol).withdrawPayout(ETH, f.carol.address),
    );
    await time.increase(PAYMENT_DELAY);
    await gasOf(
      "voidUnansweredDebit (charged to the bond)",
      f.clearingHouse.voidUnansweredDebit(1, ETH, f.alice.address),
    );
    await time.increase(TIMINGS.withdrawalGracePeriod); // unpaid vetoed debts stay locked this long
    await gasOf(
      "releaseVetoedDebt (unpaid: obligation released)",
      f.clearingHouse.releaseVetoedDebt(2, ETH, f.alice.address),
    );
    // The bond stays locked until the last cycle's double-listing deadline.
    await time.increaseTo((await f.clearingHouse.getCycle(2)).doubleListingDeadline + 1n);
    await gasOf(
      "withdrawBond (ETH)",
      f.clearingHouse.connect(f.admin).withdrawBond(ETH, ONE, f.admin.address),
    );
  });

  it("audit2 A2-M2: an Upheld answer that marks a V2 id left unmarked; markListed", async () => {
    const marked = await loadFixture(validatedV2Fixture);
    const mine = [validatedV2Guarantee(marked)];
    await commitPlanned(marked, 1n, mine, [marked.cert.guaranteeId]);
    await marked.clearingHouse.connect(marked.alice).disputeGuarantee(1, ETH, 0);
    await gasOf(
      "answerDispute (V2 upheld, first answer; the commit marked the id)",
      marked.clearingHouse
        .connect(marked.operator)
        .answerDispute(1, ETH, marked.alice.address, 0, disputeAnswerOf(mine, marked.alice.address, 0)),
    );
    const f = await loadFixture(validatedV2Fixture); // alice -> bob V2 2 ETH, validated
    const all = [validatedV2Guarantee(f)];
    const { plan } = await commitPlanned(f, 1n, all, []); // nettedV2Ids left empty
    const snapshot = await ethers.provider.send("evm_snapshot", []);
    await f.clearingHouse.connect(f.alice).disputeGuarantee(1, ETH, 0);
    await gasOf(
      "answerDispute (V2 upheld, first answer; marks the unmarked id netted)",
      f.clearingHouse
        .connect(f.operator)
        .answerDispute(1, ETH, f.alice.address, 0, disputeAnswerOf(all, f.alice.address, 0)),
    );
    await ethers.provider.send("evm_revert", [snapshot]);
    const leaf = guaranteeLeafOf(all[0].payable);
    await gasOf(
      "Vault.markListed (V2; credit proof: recipient summary + 1-level incoming path)",
      f.vault.markListed(1n, f.cert.claims, leaf.signatureHash, listedCreditProof(plan, leaf)),
    );
  });

  it("audit M-2, M-3: a removal that holds an excess and locks the recipient's deduction, then both settled", async () => {
    const f = await loadFixture(validatedV2Fixture); // alice -> bob V2 2 ETH, validated
    const ch = f.clearingHouse;
    await ch.connect(f.admin).postBond(ETH, 0, { value: 5n * ONE });
    for (const who of [f.bob, f.dave]) await f.vault.connect(who).deposit({ value: 10n * ONE });
    const v2 = validatedV2Guarantee(f);
    const all = [
      v2,
      await signedGuarantee(f, f.alice, f.carol.address, 5n, 2n * ONE),
      await signedGuarantee(f, f.dave, f.alice.address, 6n, 3n * ONE),
      await signedGuarantee(f, f.bob, f.carol.address, 7n, 3n * ONE),
    ];
    await f.vault.connect(f.bob).remunerate(...remunerateArgs(f.cert)); // bob paid before the commit
    const { plan } = await commitPlanned(f, 1n, all, [f.cert.guaranteeId]);
    const p = positionOf(all, v2);
    await ch.connect(f.alice).disputeGuarantee(1, ETH, p);
    await gasOf(
      "answerDispute (removed: excess over the debit held, recipient's deduction locked)",
      ch.answerDispute(1, ETH, f.alice.address, p, disputeAnswerOf(all, f.alice.address, p)),
    );
    await ch.connect(f.dave).payNetDebit(1, ETH, { value: 3n * ONE });
    await ch.connect(f.bob).payNetDebit(1, ETH, { value: ONE });
    await time.increase(TIMINGS.challengeWindow + 1);
    await gasOf("claimDebitRefund (ETH)", ch.claimDebitRefund(1, ETH, f.alice.address));
    const carol = creditProofOf(plan, f.carol.address);
    await ch.claimNetCredit(1, ETH, f.carol.address, carol.summary, carol.proof);
    await time.increaseTo((await ch.getCycle(1)).paymentDeadline + 1n);
    await gasOf(
      "recoverDeduction (ETH, from the recipient's collateral)",
      ch.recoverDeduction(1, ETH, f.bob.address),
    );
    expect(await ch.bondOf(ETH)).to.equal(5n * ONE);
  });

  it("audit3 A3-M2: a concession whose refund above the debit is set aside from the bond, then claimed", async () => {
    const f = await loadFixture(suretyFixture);
    const ch = f.clearingHouse;
    await ch.connect(f.admin).postBond(ETH, 0, { value: 5n * ONE });
    await f.vault.connect(f.alice).deposit({ value: 10n * ONE });
    // alice → bob 2 ETH, bob → alice 1 ETH: conceding alice's position takes her 1-ETH debit off and refunds 1.
    const all = [
      await signedGuarantee(f, f.alice, f.bob.address, 1n, 2n * ONE),
      await signedGuarantee(f, f.bob, f.alice.address, 2n, ONE),
    ];
    await commitPlanned(f, 1n, all);
    await ch.connect(f.alice).disputeGuarantee(1, ETH, 0);
    await gasOf(
      "answerDispute (conceded, first answer: 1 ETH off the debit, 1 ETH above it set aside from the bond)",
      ch
        .connect(f.operator)
        .answerDispute(
          1,
          ETH,
          f.alice.address,
          0,
          disputeAnswerOf(all, f.alice.address, 0, { concede: true }),
        ),
    );
    await time.increase(TIMINGS.challengeWindow + 1);
    await gasOf(
      "claimDebitRefund (ETH, set aside at the concession)",
      ch.claimDebitRefund(1, ETH, f.alice.address),
    );
    expect(await ch.payoutOf(ETH, f.alice.address)).to.equal(ONE);
  });
});
