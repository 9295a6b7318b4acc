/**
 * Recipients' credit disputes Core must answer (docs/clearing.md "Misdirected credits"): the open ones, kept
 * as one `operator_state` value written by the dispute handlers (through the journal, so a reorg rewinds it)
 * and read by the keeper, which answers each with the guarantee's credit proof, and by the cycle view.
 */

/** The `operator_state` key of the open credit disputes (a JSON array of {@link OpenCreditDispute}). */
export const OPEN_CREDIT_DISPUTES_KEY = "clearing.credit_disputes.open";

/** Which dispute: the cycle and the disputed guarantee (lower-case hex). */
export interface CreditDisputeKey {
  cycleId: number;
  guaranteeId: string;
}

/**
 * One open credit dispute as `CreditDisputed` announced it: recipient, payer, asset, amount (decimal base
 * units), and when it was opened (block timestamp, seconds) by which transaction. The details are null in an
 * entry written before they were kept.
 */
export interface OpenCreditDispute extends CreditDisputeKey {
  recipient: string | null;
  payer: string | null;
  asset: string | null;
  amount: string | null;
  openedAt: number | null;
  openedTx: string | null;
}

const str = (v: unknown): string | null => (typeof v === "string" ? v : null);

/** The open credit disputes stored under {@link OPEN_CREDIT_DISPUTES_KEY} (none when unset). */
export function parseOpenCreditDisputes(value: string | null): OpenCreditDispute[] {
  if (value === null) return [];
  const list: unknown = JSON.parse(value);
  if (!Array.isArray(list)) return [];
  return list
    .filter(
      (d): d is Record<string, unknown> & CreditDisputeKey =>
        typeof d === "object" &&
        d !== null &&
        typeof (d as CreditDisputeKey).cycleId === "number" &&
        typeof (d as CreditDisputeKey).guaranteeId === "string",
    )
    .map((d) => ({
      cycleId: d.cycleId,
      guaranteeId: d.guaranteeId,
      recipient: str(d.recipient),
      payer: str(d.payer),
      asset: str(d.asset),
      amount: str(d.amount),
      openedAt: typeof d.openedAt === "number" ? d.openedAt : null,
      openedTx: str(d.openedTx),
    }));
}

const sameDispute = (x: CreditDisputeKey, d: CreditDisputeKey) =>
  x.cycleId === d.cycleId && x.guaranteeId === d.guaranteeId.toLowerCase();

/** `list` with `d` added (replacing an entry of the same dispute). */
export function withCreditDispute(list: readonly OpenCreditDispute[], d: OpenCreditDispute): string {
  const rest = list.filter((x) => !sameDispute(x, d));
  rest.push({ ...d, guaranteeId: d.guaranteeId.toLowerCase() });
  return JSON.stringify(rest);
}

/** `list` without dispute `d`; null when nothing is left (the key is deleted). */
export function withoutCreditDispute(list: readonly OpenCreditDispute[], d: CreditDisputeKey): string | null {
  const rest = list.filter((x) => !sameDispute(x, d));
  return rest.length === 0 ? null : JSON.stringify(rest);
}

/** `list` without the disputes of cycle `cycleId` (a veto ends them); null when nothing is left. */
export function withoutCycle(list: readonly OpenCreditDispute[], cycleId: number): string | null {
  const rest = list.filter((x) => x.cycleId !== cycleId);
  return rest.length === 0 ? null : JSON.stringify(rest);
}

/**
 * How a credit dispute ended, on the wire (webhook `outcome`, metric label): the contract's
 * `CreditDisputeStatus` Answered / Paid / Lapsed, lower-cased, and `vetoed` (a veto ends every dispute of
 * the cycle without a `CreditDisputeResolved` event).
 */
export const CREDIT_DISPUTE_OUTCOMES = ["answered", "paid", "lapsed", "vetoed"] as const;
export type CreditDisputeOutcome = (typeof CREDIT_DISPUTE_OUTCOMES)[number];
