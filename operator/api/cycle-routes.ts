/**
 * The cycle resource of Core's asynchronous side (docs/operator-async.md):
 *
 *   GET  /core/cycles?limit&before                         committed cycles, newest first (public)
 *   GET  /core/cycles/:id                                  cycle: root, state, deadlines, totals (public)
 *   GET  /core/cycles/:id/participants/:address/proof      net position, proof, claimNetCredit args (public)
 *   GET  /core/cycles/:id/guarantees?payer=0x…             a payer's guarantee-tree leaves and proofs (public)
 *   GET  /core/cycles/:id/debits/:payer                    a payer's sum trees: summary, positions, proofs (public)
 *
 * Cycles and proofs are public: the same data is on chain (root, events) and a creditor needs its
 * proof to be paid whoever asks for it.
 */
import { Router } from "express";
import type {
  Cycle,
  CycleDebits,
  CycleGuarantees,
  CycleProof,
  CycleState,
  Cycles,
} from "../../sdk/api-clearing";
import { formatUint, parseAddress, sameAddress } from "../../sdk/wire";
import { WireError } from "../../sdk/errors";
import { participantPositions } from "../clearing/commit-plan";
import {
  DisputeAnswerError,
  rebuildCycleDebitTrees,
  rebuildCycleGuaranteeTree,
} from "../clearing/dispute-answer";
import {
  buildDebtorTree,
  debitSummaryProof,
  sumTreeProof,
  summaryCredit,
  toDebitSummaryValues,
  type DebitSummary,
} from "../../sdk/debit-tree";
import { guaranteeLeafOf } from "../clearing/commit-plan";
import { plannedGuarantees } from "../clearing/planned-guarantees";
import { cycleCommitArgs, cycleTree } from "../clearing/cycle-json";
import { query } from "express-validator";
import { COMMITTED_CYCLE_STATES } from "../clearing/schedule";
import type { CycleClaimRecord, CycleDebtRecord, CycleRecord, Repositories, StoreAreas } from "../store";
import {
  OPEN_CREDIT_DISPUTES_KEY,
  type OpenCreditDispute,
  parseOpenCreditDisputes,
} from "../clearing/credit-disputes";

const isCommitted = (cycle: CycleRecord): cycle is CycleRecord & { state: CycleState } =>
  (COMMITTED_CYCLE_STATES as readonly string[]).includes(cycle.state);
import type { RouteModule } from "./context";
import { notFound } from "./errors";
import { parsedBy, pathParam, queryParam, validate, validated } from "./validation";
import {
  PATH_400_CODES,
  SERVER_ERROR,
  errorAnswer,
  inPath,
  jsonAnswer,
  limitParameter,
  mount,
  operation,
  ref,
} from "./operations";

function parseCycleId(value: string): number {
  if (!/^[1-9][0-9]{0,15}$/.test(value) || !Number.isSafeInteger(Number(value))) {
    throw new WireError("id", "must be a positive integer cycle id");
  }
  return Number(value);
}

const cycleIdParam = pathParam("id", parseCycleId);
/** `?payer=`: required, given once. */
const payerQuery = parsedBy(query("payer"), (value) => {
  if (value === undefined) throw new WireError("payer", "is required (the payer's address)");
  if (typeof value !== "string") throw new WireError("payer", "must be given once, as a string");
  return parseAddress(value, "payer");
});

const iso = (seconds: number | null) => (seconds === null ? null : new Date(seconds * 1000).toISOString());

/** Cycles per page of `GET /core/cycles` (each is a full cycle view: debtors and claims included). */
export const DEFAULT_CYCLE_PAGE = 10;
export const MAX_CYCLE_PAGE = 50;

/** Codes the routes below answer and their declarations list. */
const CYCLE_NOT_FOUND = "cycle_not_found";
const POSITION_NOT_FOUND = "position_not_found";
const GUARANTEES_NOT_AVAILABLE = "guarantees_not_available";

/** The `id` of a cycle in a path. */
const CYCLE_ID_PARAMETER = {
  name: "id",
  in: "path",
  required: true,
  schema: { type: "string", pattern: "^[1-9][0-9]*$" },
};
/** A committed cycle whose trees Core cannot serve. */
const TREES_NOT_AVAILABLE =
  "No such committed cycle, or Core cannot serve its tree%s (a cycle Core did not plan, or one whose " +
  "guarantees no longer rebuild its committed root).";

/** The cycle resource's operations: mounted below, described in Core's OpenAPI document. */
export const CYCLE_OPERATIONS = {
  list: operation("get", "/core/cycles", {
    tags: ["clearing"],
    summary: "Committed cycles (committed, finalized, vetoed), newest first, paginated",
    parameters: [
      limitParameter(MAX_CYCLE_PAGE, DEFAULT_CYCLE_PAGE),
      {
        name: "before",
        in: "query",
        required: false,
        schema: { type: "string", pattern: "^[1-9][0-9]*$" },
        description: "Only cycles with a lower id: the `next_cursor` of the previous page.",
      },
    ],
    responses: {
      "200": jsonAnswer("One page of cycles, each as `GET /core/cycles/{id}`.", ref("Cycles")),
      "400": errorAnswer("`limit` or `before` malformed or repeated.", ["invalid_request"]),
      ...SERVER_ERROR,
    },
  }),
  one: operation("get", "/core/cycles/{id}", {
    tags: ["clearing"],
    summary: "A clearing cycle seen committed on chain: root, deadlines, totals, debts, claims",
    parameters: [CYCLE_ID_PARAMETER],
    responses: {
      "200": jsonAnswer("The cycle.", ref("Cycle")),
      "400": errorAnswer("Malformed cycle id.", ["invalid_request", ...PATH_400_CODES]),
      "404": errorAnswer("No cycle with that id was seen committed.", [CYCLE_NOT_FOUND]),
      ...SERVER_ERROR,
    },
  }),
  proof: operation("get", "/core/cycles/{id}/participants/{address}/proof", {
    tags: ["clearing"],
    summary: "A participant's net positions in a committed cycle, with Merkle proofs and claim arguments",
    parameters: [CYCLE_ID_PARAMETER, inPath("address", "Address")],
    responses: {
      "200": jsonAnswer("One position per asset with a non-zero net.", ref("CycleProof")),
      "400": errorAnswer("Malformed cycle id or address.", ["invalid_request", ...PATH_400_CODES]),
      "404": errorAnswer("No such committed cycle, or no position of the participant in it.", [
        CYCLE_NOT_FOUND,
        POSITION_NOT_FOUND,
      ]),
      ...SERVER_ERROR,
    },
  }),
  guarantees: operation("get", "/core/cycles/{id}/guarantees", {
    tags: ["clearing"],
    summary:
      "A payer's leaves of a committed cycle's guarantees tree, with Merkle proofs (for proveDoubleListing " +
      "and V1 reserves)",
    parameters: [CYCLE_ID_PARAMETER, { name: "payer", in: "query", required: true, schema: ref("Address") }],
    responses: {
      "200": jsonAnswer("The payer's leaves and proofs.", ref("CycleGuarantees")),
      "400": errorAnswer("Malformed cycle id; `payer` missing, repeated or malformed.", [
        "invalid_request",
        ...PATH_400_CODES,
      ]),
      "404": errorAnswer(TREES_NOT_AVAILABLE.replace("%s", ""), [CYCLE_NOT_FOUND, GUARANTEES_NOT_AVAILABLE]),
      ...SERVER_ERROR,
    },
  }),
  debits: operation("get", "/core/cycles/{id}/debits/{payer}", {
    tags: ["clearing"],
    summary:
      "An account's sum trees in a committed cycle, outgoing and incoming: summary, positions and proofs " +
      "(what disputeGuarantee disputes, answerDispute and revealSummary prove, claimNetCredit and " +
      'Vault.releaseListedReserve take; docs/clearing.md "Disputes", "Credits bound to guarantees")',
    parameters: [CYCLE_ID_PARAMETER, inPath("payer", "Address")],
    responses: {
      "200": jsonAnswer("The payer's trees.", ref("CycleDebits")),
      "400": errorAnswer("Malformed cycle id or payer.", ["invalid_request", ...PATH_400_CODES]),
      "404": errorAnswer(TREES_NOT_AVAILABLE.replace("%s", "s"), [CYCLE_NOT_FOUND, GUARANTEES_NOT_AVAILABLE]),
      ...SERVER_ERROR,
    },
  }),
};

function parseCyclePage(value: string): number {
  const n = /^[0-9]{1,3}$/.test(value) ? Number(value) : NaN;
  if (!(n >= 1 && n <= MAX_CYCLE_PAGE))
    throw new WireError("limit", `must be an integer from 1 to ${MAX_CYCLE_PAGE}`);
  return n;
}

function parseBefore(value: string): number {
  if (!/^[1-9][0-9]{0,15}$/.test(value) || !Number.isSafeInteger(Number(value))) {
    throw new WireError(
      "before",
      "must be a positive integer cycle id (the next_cursor of the previous page)",
    );
  }
  return Number(value);
}

/** The body of `GET /core/cycles/{id}`. */
export async function cycleView(
  store: Pick<Repositories, "cycles" | "operatorState">,
  cycle: CycleRecord,
): Promise<Cycle> {
  return (await cycleViews(store, [cycle]))[0];
}

/**
 * The bodies of several cycles (the items of a `GET /core/cycles` page, in order): the open credit
 * disputes are read once for the page, each cycle's debts and claims on their own.
 */
export async function cycleViews(
  store: Pick<Repositories, "cycles" | "operatorState">,
  cycles: readonly CycleRecord[],
): Promise<Cycle[]> {
  const [creditDisputes, perCycle] = await Promise.all([
    store.operatorState.getOperatorState(OPEN_CREDIT_DISPUTES_KEY).then(parseOpenCreditDisputes),
    Promise.all(
      cycles.map((cycle) =>
        Promise.all([
          store.cycles.listCycleDebts({ cycleId: cycle.cycleId }),
          store.cycles.listCycleClaims(cycle.cycleId),
        ]),
      ),
    ),
  ]);
  return cycles.map((cycle, i) => viewOf(cycle, ...perCycle[i], creditDisputes));
}

function viewOf(
  cycle: CycleRecord,
  debts: readonly CycleDebtRecord[],
  claims: readonly CycleClaimRecord[],
  creditDisputes: readonly OpenCreditDispute[],
): Cycle {
  const { state } = cycle;
  // Only committed cycles are read (a planned or sent one has no view yet).
  if (state === "PLANNED" || state === "SENT") throw new Error(`cycle ${cycle.cycleId} is not committed`);
  const args = cycleCommitArgs(cycle);
  return {
    cycle_id: cycle.cycleId,
    state,
    planned_by_core: cycle.plannedByCore,
    root: cycle.root,
    guarantees_root: args.guaranteesRoot,
    debits_root: args.debitsRoot,
    challenge_deadline: iso(cycle.challengeDeadline),
    answer_deadline: iso(cycle.answerDeadline),
    vetoed_at: iso(cycle.vetoedAt),
    committed_at: iso(cycle.committedAt),
    committed_block: cycle.committedBlock,
    commit_tx: cycle.txHash,
    payment_deadline: iso(cycle.paymentDeadline),
    default_deadline: iso(cycle.defaultDeadline),
    finalized_at: iso(cycle.finalizedAt),
    guarantee_count: cycle.guaranteeIds.length,
    totals: args.totals.map((t) => ({
      asset_address: t.asset,
      total_debit: formatUint(t.totalDebit),
      total_credit: formatUint(t.totalCredit),
    })),
    debtors: debts.map((d) => ({
      asset_address: d.asset,
      debtor: d.debtor,
      amount: formatUint(d.amount),
      status: d.status,
      covered: d.covered === null ? null : formatUint(d.covered),
    })),
    claims: claims.map((c) => ({
      asset_address: c.asset,
      participant: c.participant,
      amount: formatUint(c.amount),
    })),
    credit_disputes: creditDisputes
      .filter((d) => d.cycleId === cycle.cycleId)
      .map((d) => ({
        guarantee_id: d.guaranteeId,
        recipient: d.recipient,
        payer: d.payer,
        asset_address: d.asset,
        amount: d.amount,
        opened_at: iso(d.openedAt),
        opened_tx: d.openedTx,
        answer_deadline: iso(cycle.answerDeadline),
      })),
  };
}

export const cycleRoutes: RouteModule<StoreAreas<"cycles" | "guarantees" | "operatorState">> = (context) => {
  const { store, logger } = context;
  const router = Router();

  /** Only cycles seen committed on chain are served (a plan not yet committed may still change). */
  const committedCycle = async (id: number): Promise<CycleRecord & { state: CycleState }> => {
    const cycle = await store.cycles.getCycle(id);
    if (!cycle || !isCommitted(cycle)) throw notFound(CYCLE_NOT_FOUND, `no committed cycle ${id}`);
    return cycle;
  };

  mount(
    router,
    CYCLE_OPERATIONS.list,
    ...validate(queryParam("limit", parseCyclePage), queryParam("before", parseBefore)),
    async (req, res) => {
      const { limit = DEFAULT_CYCLE_PAGE, before } = validated<{ limit?: number; before?: number }>(req);
      // One snapshot: the indexer may move a cycle (finalized, vetoed) between the reads.
      const page = await store.transaction(async (tx) => {
        const ids = await tx.cycles.listCycleIds(COMMITTED_CYCLE_STATES, {
          beforeId: before,
          limit: limit + 1,
        });
        const shown = ids.slice(0, limit);
        const cycles = await Promise.all(shown.map((id) => tx.cycles.getCycle(id)));
        const views = await cycleViews(
          tx,
          cycles.filter((c): c is CycleRecord => c !== null),
        );
        return { views, more: ids.length > limit, last: shown[shown.length - 1] };
      });
      res.json({ cycles: page.views, next_cursor: page.more ? String(page.last) : null } satisfies Cycles);
    },
  );

  mount(router, CYCLE_OPERATIONS.one, ...validate(cycleIdParam), async (req, res) => {
    const cycle = await committedCycle(validated<{ id: number }>(req).id);
    res.json(await cycleView(store, cycle));
  });

  mount(
    router,
    CYCLE_OPERATIONS.proof,
    ...validate(cycleIdParam, pathParam("address", parseAddress)),
    async (req, res) => {
      const { id, address: participant } = validated<{ id: number; address: string }>(req);
      const cycle = await committedCycle(id);
      if (!cycle.plannedByCore) {
        // Indexed from its events only: the net-position tree behind its root was never given to Core.
        throw notFound(
          POSITION_NOT_FOUND,
          `cycle ${cycle.cycleId} was not planned by Core: Core holds no net-position proofs for it`,
        );
      }
      const tree = cycleTree(cycle);
      const positions = participantPositions(tree, participant);
      if (positions.length === 0) {
        throw notFound(POSITION_NOT_FOUND, `${participant} has no net position in cycle ${cycle.cycleId}`);
      }
      const claimed = await store.cycles.listCycleClaims(cycle.cycleId);
      // A vetoed cycle never pays a claim (`claimNetCredit` reverts `CycleIsVetoed`): no call to offer.
      const claimable = cycle.state !== "VETOED";
      // Claims prove the participant's summary under the debitsRoot (issue 25, item 5); a vetoed cycle's
      // guarantees moved on (its trees no longer rebuild), and it pays no claim anyway.
      const trees = claimable ? await debitTrees(cycle) : null;
      res.json({
        cycle_id: cycle.cycleId,
        root: cycle.root,
        participant,
        positions: positions.map((p) => {
          const isClaimed = claimed.some(
            (c) => sameAddress(c.asset, p.asset) && sameAddress(c.participant, participant),
          );
          return {
            asset_address: p.asset,
            debit: formatUint(p.debit),
            credit: formatUint(p.credit),
            proof: p.proof,
            claimed: isClaimed,
            // The exact call for a creditor: ClearingHouse.claimNetCredit(cycleId, asset, participant, summary,
            // summaryProof) with the participant's summary under the debitsRoot (credit = in_total − total);
            // it sets the credit aside, and the participant pulls it with withdrawPayout(asset, to).
            claim_net_credit_args: (() => {
              const s = trees?.summaries.find(
                (x) => sameAddress(x.asset, p.asset) && sameAddress(x.debtor, participant),
              );
              if (p.credit === 0n || trees === null || s === undefined) return null;
              return [
                String(cycle.cycleId),
                p.asset,
                participant,
                summaryJson(s),
                debitSummaryProof(trees!.tree, s),
              ];
            })(),
          };
        }),
      } satisfies CycleProof);
    },
  );

  /**
   * The leaves of the cycle's guarantees tree (sdk/guarantee-tree.ts) whose payer is `payer`, each with its
   * proof under the committed `guarantees_root`: what `proveDoubleListing` takes, and what a payer checks
   * its debit against before deciding to `challengeDebit`. Rebuilt from the records the cycle was planned
   * from; served only when the rebuilt root is the committed one.
   */
  // Rebuilding a tree hashes every guarantee of the cycle: the last few trees served are kept (a committed
  // cycle's tree never changes; the key carries the root), so repeated public requests cost a lookup.
  const trees = new Map<string, ReturnType<typeof rebuildCycleGuaranteeTree>>();
  const TREES_KEPT = 8;

  mount(router, CYCLE_OPERATIONS.guarantees, ...validate(cycleIdParam, payerQuery), async (req, res) => {
    const { id: cycleId, payer } = validated<{ id: number; payer: string }>(req);
    const cycle = await committedCycle(cycleId);
    if (!cycle.plannedByCore) {
      throw notFound(
        GUARANTEES_NOT_AVAILABLE,
        `cycle ${cycle.cycleId} was not planned by Core: Core holds no guarantees tree for it`,
      );
    }
    const { guaranteesRoot } = cycleCommitArgs(cycle);
    const key = `${cycle.cycleId}:${guaranteesRoot.toLowerCase()}`;
    let tree = trees.get(key);
    if (tree === undefined) tree = await rebuild(cycle.cycleId, cycle.guaranteeIds, guaranteesRoot);
    trees.delete(key);
    trees.set(key, tree);
    if (trees.size > TREES_KEPT) trees.delete(trees.keys().next().value!);
    const leaves = [];
    for (const [index, [guaranteeId, leafPayer, recipient, asset, amount, sigHash]] of tree.entries()) {
      if (!sameAddress(leafPayer, payer)) continue;
      leaves.push({
        guarantee_id: guaranteeId,
        payer: leafPayer,
        recipient,
        asset_address: asset,
        amount,
        signature_hash: sigHash,
        leaf_hash: tree.leafHash([guaranteeId, leafPayer, recipient, asset, amount, sigHash]),
        proof: tree.getProof(index),
      });
    }
    leaves.sort((a, b) => (BigInt(a.guarantee_id) < BigInt(b.guarantee_id) ? -1 : 1));
    res.json({
      cycle_id: cycle.cycleId,
      state: cycle.state,
      guarantees_root: tree.root,
      payer,
      guarantees: leaves,
    } satisfies CycleGuarantees);
  });

  /**
   * A payer's sum trees of the cycle, one per asset it owes in (docs/clearing.md "Disputes"): the summary
   * and its proof under the cycle's `debitsRoot` (what `answerDispute` reveals), and every position with
   * its guarantee and sum-tree proof, so the payer checks each guarantee it is charged for and disputes the
   * position of one it did not sign.
   */
  mount(
    router,
    CYCLE_OPERATIONS.debits,
    ...validate(
      cycleIdParam,
      pathParam("payer", (v) => parseAddress(v, "payer")),
    ),
    async (req, res) => {
      const { id: cycleId, payer } = validated<{ id: number; payer: string }>(req);
      const cycle = await committedCycle(cycleId);
      if (!cycle.plannedByCore) {
        throw notFound(
          GUARANTEES_NOT_AVAILABLE,
          `cycle ${cycle.cycleId} was not planned by Core: Core holds no debtor trees for it`,
        );
      }
      const guarantees = await plannedGuarantees(store, cycle);
      const trees = await debitTrees(cycle, guarantees);
      const leaves = guarantees.map(guaranteeLeafOf);
      const assets = trees.summaries.filter((s) => sameAddress(s.debtor, payer)).map((s) => s.asset);
      const node = (n: { hash: string; sum: bigint }) => ({ hash: n.hash, sum: formatUint(n.sum) });
      res.json({
        cycle_id: cycle.cycleId,
        state: cycle.state,
        debits_root: trees.root,
        payer,
        trees: assets.map((asset) => {
          const tree = buildDebtorTree(leaves, payer, asset)!;
          const { summary } = tree;
          return {
            asset_address: asset,
            sum_root: summary.sumRoot,
            total: formatUint(summary.total),
            depth: summary.depth,
            in_root: summary.inRoot,
            in_total: formatUint(summary.inTotal),
            in_depth: summary.inDepth,
            // What the summary adds to its asset's sum tree, and that tree's top: the cycle's total credit.
            credit: formatUint(summaryCredit(summary)),
            asset_credit: formatUint(trees.tree.tops.find((t) => sameAddress(t.asset, asset))?.credit ?? 0n),
            summary_proof: debitSummaryProof(trees.tree, summary),
            // The account's incoming tree: each guarantee credited to it, with its proof (the CreditProof of
            // `answerDispute` and `Vault.releaseListedReserve`: summary, summary_proof, position, path).
            incoming: tree.incoming.leaves.map((leaf, position) => {
              const proof = sumTreeProof(tree.incoming, position);
              return {
                position,
                guarantee_id: leaf.guaranteeId,
                payer: leaf.payer,
                amount: formatUint(leaf.amount),
                signature_hash: leaf.signatureHash,
                leaf: node(proof.leaf),
                path: proof.path.map(node),
              };
            }),
            positions: tree.leaves.map((leaf, position) => {
              const proof = sumTreeProof(tree, position);
              return {
                position,
                guarantee_id: leaf.guaranteeId,
                recipient: leaf.recipient,
                amount: formatUint(leaf.amount),
                signature_hash: leaf.signatureHash,
                leaf: node(proof.leaf),
                path: proof.path.map(node),
              };
            }),
          };
        }),
      } satisfies CycleDebits);
    },
  );

  /** A summary as `claimNetCredit`'s `summary` argument (a JSON object ethers and viem encode as the tuple). */
  function summaryJson(s: DebitSummary) {
    const [, , sumRoot, total, depth, inRoot, inTotal, inDepth] = toDebitSummaryValues(s);
    return { sumRoot, total, depth, inRoot, inTotal, inDepth };
  }

  /** The accounts' trees of a cycle Core planned (404 if its records no longer rebuild the debitsRoot). */
  async function debitTrees(cycle: CycleRecord, planned?: Awaited<ReturnType<typeof plannedGuarantees>>) {
    const guarantees = planned ?? (await plannedGuarantees(store, cycle));
    try {
      return rebuildCycleDebitTrees(cycleCommitArgs(cycle).debitsRoot, guarantees);
    } catch (error) {
      if (!(error instanceof DisputeAnswerError) && !(error instanceof WireError)) throw error;
      logger.warn({ cycle_id: cycle.cycleId, reason: error.message }, "cannot rebuild the debtor trees");
      throw notFound(
        GUARANTEES_NOT_AVAILABLE,
        `the guarantees of cycle ${cycle.cycleId} no longer rebuild its committed debits root`,
      );
    }
  }

  /** The guarantees tree of a cycle Core planned, from the records it was planned from (404 if it no longer rebuilds). */
  async function rebuild(cycleId: number, guaranteeIds: readonly string[], guaranteesRoot: string) {
    const guarantees = await plannedGuarantees(store, { cycleId, guaranteeIds });
    try {
      return rebuildCycleGuaranteeTree(BigInt(cycleId), guaranteesRoot, guarantees);
    } catch (error) {
      if (!(error instanceof DisputeAnswerError) && !(error instanceof WireError)) throw error;
      // Its guarantees moved on (a vetoed cycle's go into a later one) or its records changed: a proof
      // from what the store holds now would not verify against the committed root.
      logger.warn({ cycle_id: cycleId, reason: error.message }, "cannot rebuild a guarantees tree");
      throw notFound(
        GUARANTEES_NOT_AVAILABLE,
        `the guarantees of cycle ${cycleId} no longer rebuild its committed guarantees root`,
      );
    }
  }

  return router;
};
