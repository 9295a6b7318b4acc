/**
 * The stored (JSON) form of a cycle's plan: its commitCycle arguments (bigints as decimal strings) and its
 * tree dump. `cycleCommitArgs` and `cycleTree` are the one place a stored cycle's JSON is read back.
 */
import type { CycleRecord } from "../store";
import { loadCycleTree, type CommitCycleArgs, type CycleTreeDump } from "./commit-plan";
import type { CycleTree } from "../../sdk/merkle";

export interface CommitCycleArgsJson {
  cycleId: string;
  root: string;
  guaranteesRoot: string;
  /** Absent in cycles stored before the dispute game's debtor trees (read as the zero hash). */
  debitsRoot?: string;
  totals: { asset: string; totalDebit: string; totalCredit: string }[];
  debtors: { asset: string; debtor: string; amount: string }[];
  nettedV2Ids: string[];
}

export function commitArgsToJson(args: CommitCycleArgs): CommitCycleArgsJson {
  return {
    cycleId: args.cycleId.toString(),
    root: args.root,
    guaranteesRoot: args.guaranteesRoot,
    debitsRoot: args.debitsRoot,
    totals: args.totals.map((t) => ({
      asset: t.asset,
      totalDebit: t.totalDebit.toString(),
      totalCredit: t.totalCredit.toString(),
    })),
    debtors: args.debtors.map((d) => ({ asset: d.asset, debtor: d.debtor, amount: d.amount.toString() })),
    nettedV2Ids: [...args.nettedV2Ids],
  };
}

export function commitArgsFromJson(json: CommitCycleArgsJson): CommitCycleArgs {
  return {
    cycleId: BigInt(json.cycleId),
    root: json.root,
    guaranteesRoot: json.guaranteesRoot,
    debitsRoot: json.debitsRoot ?? `0x${"0".repeat(64)}`,
    totals: json.totals.map((t) => ({
      asset: t.asset,
      totalDebit: BigInt(t.totalDebit),
      totalCredit: BigInt(t.totalCredit),
    })),
    debtors: json.debtors.map((d) => ({ asset: d.asset, debtor: d.debtor, amount: BigInt(d.amount) })),
    nettedV2Ids: [...json.nettedV2Ids],
  };
}

/** The commitCycle arguments a stored cycle was planned (or indexed) with. */
export function cycleCommitArgs(cycle: Pick<CycleRecord, "args">): CommitCycleArgs {
  return commitArgsFromJson(JSON.parse(cycle.args) as CommitCycleArgsJson);
}

/** A stored cycle's net-position tree, checked against its root (`loadCycleTree`). */
export function cycleTree(cycle: Pick<CycleRecord, "treeDump" | "root">): CycleTree {
  return loadCycleTree(JSON.parse(cycle.treeDump) as CycleTreeDump, cycle.root);
}
