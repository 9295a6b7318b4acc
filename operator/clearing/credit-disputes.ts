/**
 * Recipients' credit disputes Core must answer (docs/clearing.md "Misdirected credits"): the open ones, kept
 * as one `operator_state` value written by the dispute handlers (through the journal, so a reorg rewinds it)
 * and read by the keeper, which answers each with the guarantee's credit proof.
 */

/** The `operator_state` key of the open credit disputes (a JSON array of {@link OpenCreditDispute}). */
export const OPEN_CREDIT_DISPUTES_KEY = "clearing.credit_disputes.open";

/** One open credit dispute: the cycle and the disputed guarantee (lower-case hex). */
export interface OpenCreditDispute {
  cycleId: number;
  guaranteeId: string;
}

/** The open credit disputes stored under {@link OPEN_CREDIT_DISPUTES_KEY} (none when unset). */
export function parseOpenCreditDisputes(value: string | null): OpenCreditDispute[] {
  if (value === null) return [];
  const list: unknown = JSON.parse(value);
  if (!Array.isArray(list)) return [];
  return list.filter(
    (d): d is OpenCreditDispute =>
      typeof d === "object" &&
      d !== null &&
      typeof (d as OpenCreditDispute).cycleId === "number" &&
      typeof (d as OpenCreditDispute).guaranteeId === "string",
  );
}

/** `list` with `d` added (`open`) or removed; null when nothing is left (the key is deleted). */
export function withCreditDispute(
  list: readonly OpenCreditDispute[],
  d: OpenCreditDispute,
  open: boolean,
): string | null {
  const id = d.guaranteeId.toLowerCase();
  const rest = list.filter((x) => x.cycleId !== d.cycleId || x.guaranteeId !== id);
  if (open) rest.push({ cycleId: d.cycleId, guaranteeId: id });
  return rest.length === 0 ? null : JSON.stringify(rest);
}

/** `list` without the disputes of cycle `cycleId` (a veto ends them); null when nothing is left. */
export function withoutCycle(list: readonly OpenCreditDispute[], cycleId: number): string | null {
  const rest = list.filter((x) => x.cycleId !== cycleId);
  return rest.length === 0 ? null : JSON.stringify(rest);
}
