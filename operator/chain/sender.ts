/**
 * The operator account's transactions (cycle commits, keeper calls), through ONE nonce source per key
 * (docs/operator-async.md, "Operator transactions"):
 *
 * - `send` estimates the call (a revert is reported with its decoded error and nothing is sent), takes
 *   the next nonce from a local counter (serialised: two sends in one tick never share a nonce; the
 *   node's "pending" count is only read to start the counter and to reconcile it after a nonce error),
 *   signs, hands the signed bytes to the caller's `persist` hook and to the sender's own journal
 *   (`operator_state`), and only then broadcasts. A restart therefore rebroadcasts exactly those bytes
 *   (same nonce, same hash) instead of signing a second transaction.
 * - A send is done only when one of its versions (the original or a fee replacement, same nonce) is
 *   mined and buried under `confirmations` blocks. "Nonce too low" is never success by itself: it means
 *   done only if a receipt of ours exists at that nonce, and otherwise that another transaction took the
 *   nonce (`consumed`).
 * - `tick()` follows every unfinished send: a version that no longer exists on the node (dropped from
 *   the mempool) is re-sent; one not mined after `replaceAfterBlocks` new blocks is replaced by the same
 *   call with both fee fields raised by at least `feeBumpBps` (persisted the same way before it is
 *   broadcast); one the node refuses for a reason no fee cures is cancelled (its nonce goes to a
 *   zero-value transfer to the operator itself) so it cannot block every later nonce.
 * - An identical call (same target and calldata) already in flight is not sent again: `send` answers
 *   that transaction (the keeper re-finds an uncovered debt every tick until its cover is mined).
 */
import {
  type ErrorDescription,
  type Interface,
  Transaction,
  type TransactionReceipt,
  Wallet,
  getAddress,
} from "ethers";
import { type Clock, systemClock } from "../clock";
import type { Logger } from "../logger";
import { silentLogger } from "../logger";
import { AsyncMutex } from "../store/mutex";
import type { Repositories } from "../store";
import type { ChainProvider } from "./provider";
import { type BroadcastOutcome, CallRevertedError, classify, isRevert, revertData } from "./node-errors";

export { type BroadcastOutcome, CallRevertedError } from "./node-errors";

export interface SignedTransaction {
  hash: string;
  nonce: number;
  raw: string;
  gasLimit: bigint;
}

/** What `send` answers: the signed transaction, or the one already in flight for the same call. */
export interface SentTransaction extends SignedTransaction {
  /** True when an identical call was already in flight and nothing new was signed. */
  alreadyInFlight: boolean;
}

/** Where one send stands (`tick()`, `follow()`). */
export type SendStatus =
  /** Not mined yet (or mined but not yet `confirmations` deep); `hash` is the newest version. */
  | { state: "pending"; nonce: number; hash: string; label: string }
  /** One of our versions was mined (`hash`); `receipt.status` says whether the call succeeded. */
  | { state: "mined"; nonce: number; hash: string; label: string; receipt: TransactionReceipt }
  /**
   * The call was never executed: its nonce was used by a transaction that is not ours, or by the
   * sender's own cancel (`cancelled`) after no node would accept the call.
   */
  | { state: "consumed"; nonce: number; hash: string; label: string; cancelled: boolean };

/** How unfinished sends are pushed through (Core's `SURETY_TX_*` settings). */
export interface SenderPolicy {
  /** New blocks without inclusion after which the newest version is replaced with higher fees. */
  replaceAfterBlocks: number;
  /** Raise of both fee fields per replacement, in basis points (nodes require ≥ 1000, i.e. 10 %). */
  feeBumpBps: number;
  /** Ceiling on maxFeePerGas (and so on the tip) of any version; null: none. */
  maxFeePerGas: bigint | null;
  /** Blocks a receipt must be buried under before a send is finished (a reorg may undo a shallower one). */
  confirmations: number;
}

export const DEFAULT_SENDER_POLICY: SenderPolicy = Object.freeze({
  replaceAfterBlocks: 3,
  feeBumpBps: 1_250,
  maxFeePerGas: null,
  confirmations: 0,
});

export interface SendRequest {
  to: string;
  data: string;
  /** Decodes a revert of the estimate into a custom error. */
  errors: Interface;
  /** Skips the estimate (the caller estimated already and added its headroom). */
  gasLimit?: bigint;
  /** Names the call in logs (e.g. "commitCycle 3"). */
  label?: string;
  /**
   * Called with every version of this transaction (the original and each fee replacement) before it
   * is broadcast; throwing stops the broadcast. The scheduler stores the bytes with its cycle here.
   */
  persist?: (tx: SignedTransaction) => Promise<void>;
}

export interface OperatorSenderOptions {
  privateKey: string;
  provider: ChainProvider;
  chainId: bigint;
  /** Holds the sender's journal of unfinished transactions (`operator_state`). */
  store: Pick<Repositories, "operatorState">;
  logger?: Logger;
  policy?: Partial<SenderPolicy>;
  /** Wall clock: when a send was first signed (its age in metrics). */
  clock?: Clock;
}

/** Extra gas over the estimate (state may move a little between estimate and inclusion). */
export const GAS_HEADROOM_PERCENT = 20n;
const BPS = 10_000n;
/** Fresh nonces tried by one `send` when other transactions keep taking them. */
const MAX_NONCE_ATTEMPTS = 3;
/** Versions signed for one nonce at most (each persisted): bounds the journal whatever the market does. */
export const MAX_VERSIONS = 16;
/** Gas of a plain transfer: what a cancel costs. */
const TRANSFER_GAS = 21_000n;
/** operator_state key prefix of the journal (one key per operator address). */
export const SENDER_JOURNAL_KEY_PREFIX = "sender.in_flight.";

interface Fees {
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
}

/** One signed version of a send (the original, a fee replacement or a cancel, all with the same nonce). */
interface Version {
  hash: string;
  raw: string;
  /** Head block when it was signed: the replacement bound counts from here. */
  sentBlock: number;
  /** How the node last refused it (absent once it accepted it). */
  refused?: BroadcastOutcome["kind"];
  /** A zero-value transfer to the operator itself that frees the nonce of a call no node accepts. */
  cancel?: true;
}

/** An unfinished send. Versions are only ever added, so any of them may turn out to be the mined one. */
interface InFlight {
  nonce: number;
  label: string;
  /** Unix seconds (wall clock) when its first version was signed. */
  signedAt: number;
  to: string;
  data: string;
  gasLimit: bigint;
  versions: Version[];
  /** The version seen mined (not yet `confirmations` deep). */
  mined: { hash: string; blockNumber: number } | null;
  persist?: (tx: SignedTransaction) => Promise<void>;
}

interface JournalJson {
  transactions: { nonce: number; label: string; signedAt: number; versions: Version[] }[];
}

function journalKeyOf(address: string): string {
  return SENDER_JOURNAL_KEY_PREFIX + getAddress(address).toLowerCase();
}

/** Unfinished sends of `address` as its journal holds them, and when the oldest was signed (metrics). */
export async function unfinishedTransactions(
  store: Pick<Repositories, "operatorState">,
  address: string,
): Promise<{ count: number; oldestSignedAt: number | null }> {
  const stored = await store.operatorState.getOperatorState(journalKeyOf(address));
  if (stored === null) return { count: 0, oldestSignedAt: null };
  const { transactions } = JSON.parse(stored) as JournalJson;
  const times = transactions.map((t) => t.signedAt);
  return { count: transactions.length, oldestSignedAt: times.length === 0 ? null : Math.min(...times) };
}

function callKey(to: string, data: string): string {
  return `${to.toLowerCase()}:${data.toLowerCase()}`;
}

function bump(value: bigint, bps: bigint): bigint {
  // Rounded up: a node compares against exactly +10 % and refuses one wei less.
  return value + (value * bps + BPS - 1n) / BPS;
}

export class OperatorSender {
  private readonly mutex = new AsyncMutex();
  readonly wallet: Wallet;
  private readonly provider: ChainProvider;
  private readonly chainId: bigint;
  private readonly store: OperatorSenderOptions["store"];
  private readonly logger: Logger;
  private readonly clock: Clock;
  readonly policy: SenderPolicy;
  private readonly journalKey: string;
  /** Unfinished sends by nonce; null until the journal is loaded. */
  private inFlight: Map<number, InFlight> | null = null;
  /** The next nonce to hand out; null: ask the chain (start, or after a nonce error). */
  private nextNonce: number | null = null;

  constructor(options: OperatorSenderOptions) {
    this.wallet = new Wallet(options.privateKey);
    this.provider = options.provider;
    this.chainId = options.chainId;
    this.store = options.store;
    this.logger = options.logger ?? silentLogger();
    this.clock = options.clock ?? systemClock;
    this.policy = Object.freeze({ ...DEFAULT_SENDER_POLICY, ...options.policy });
    if (!Number.isSafeInteger(this.policy.replaceAfterBlocks) || this.policy.replaceAfterBlocks < 1) {
      throw new RangeError("replaceAfterBlocks must be a positive integer");
    }
    if (!Number.isSafeInteger(this.policy.feeBumpBps) || this.policy.feeBumpBps < 1_000) {
      throw new RangeError("feeBumpBps must be an integer of at least 1000 (10 %, the usual node minimum)");
    }
    this.journalKey = journalKeyOf(this.wallet.address);
  }

  get address(): string {
    return this.wallet.address;
  }

  /** eth_estimateGas of the call from the operator; throws {@link CallRevertedError} on a revert. */
  async estimate(to: string, data: string, errors: Interface): Promise<bigint> {
    try {
      return await this.provider.estimateGas({ from: this.address, to, data });
    } catch (error) {
      if (!isRevert(error)) throw error;
      const raw = revertData(error);
      let decoded: ErrorDescription | null = null;
      if (raw) {
        try {
          decoded = errors.parseError(raw);
        } catch {
          decoded = null;
        }
      }
      throw new CallRevertedError(decoded, raw, error);
    }
  }

  /**
   * Sends the call once: estimates (unless `gasLimit`), signs with the next nonce, persists
   * (`persist`, then the journal), broadcasts. An identical call in flight is answered instead.
   * Throws {@link CallRevertedError} when the estimate reverts (nothing signed); any other error after
   * the transaction was persisted leaves it to {@link tick} (it is re-sent from the journal).
   */
  send(request: SendRequest): Promise<SentTransaction> {
    return this.mutex.run(async () => {
      const inFlight = await this.loaded();
      const key = callKey(request.to, request.data);
      for (const entry of inFlight.values()) {
        if (callKey(entry.to, entry.data) === key) return { ...signedOf(entry), alreadyInFlight: true };
      }
      const gasLimit =
        request.gasLimit ??
        ((await this.estimate(request.to, request.data, request.errors)) * (100n + GAS_HEADROOM_PERCENT)) /
          100n;
      const fees = this.capped(await this.marketFees());
      const label = request.label ?? "call";
      for (let attempt = 1; ; attempt++) {
        const nonce = await this.allocateNonce();
        const head = await this.provider.getBlockNumber();
        const entry: InFlight = {
          nonce,
          label,
          signedAt: this.clock.nowSeconds(),
          to: getAddress(request.to),
          data: request.data,
          gasLimit,
          versions: [],
          mined: null,
          persist: request.persist,
        };
        const signed = await this.signVersion(entry, fees, head);
        try {
          await request.persist?.(signed);
          inFlight.set(nonce, entry);
          await this.saveJournal();
        } catch (error) {
          inFlight.delete(nonce);
          this.nextNonce = nonce; // never broadcast: the nonce is still free
          throw error;
        }
        const outcome = await this.broadcast(signed.raw);
        const logged = { label, nonce, tx: signed.hash, ...feeFields(fees) };
        if (outcome.kind !== "accepted" && outcome.kind !== "known") entry.versions[0].refused = outcome.kind;
        if (outcome.kind === "accepted" || outcome.kind === "known") {
          this.logger.info(logged, "operator transaction sent");
          return { ...signed, alreadyInFlight: false };
        }
        if (outcome.kind === "nonce_too_high" && this.coveredBelow(nonce, await this.pendingCount())) {
          // Our own lower nonces are on their way (tick() re-sends them); this one follows them.
          this.logger.warn(logged, "operator transaction waits for lower nonces");
          return { ...signed, alreadyInFlight: false };
        }
        if (outcome.kind === "fee_too_low") {
          // Persisted: tick() replaces it with higher fees after the bound.
          this.logger.warn({ ...logged, err: outcome.error }, "operator transaction refused: fees too low");
          return { ...signed, alreadyInFlight: false };
        }
        if (outcome.kind === "failed") {
          this.logger.warn(
            { ...logged, err: outcome.error },
            "operator transaction broadcast failed; retried",
          );
          throw outcome.error;
        }
        // Another transaction holds this nonce (a send from the same key outside Core, or a nonce Core
        // handed out that the chain does not know): this one was never accepted; take a free nonce.
        inFlight.delete(nonce);
        await this.saveJournal();
        await this.reconcile(outcome.kind, nonce);
        if (attempt >= MAX_NONCE_ATTEMPTS) {
          throw new Error(
            `${label}: no free nonce after ${attempt} attempts (last: ${outcome.kind}): ${String(
              (outcome.error as Error).message ?? outcome.error,
            )}`,
          );
        }
      }
    });
  }

  /**
   * Follows one transaction persisted outside the journal (the scheduler's stored commit): adopts it
   * when the journal does not hold it (a crash between the two writes), re-attaches `persist` for
   * future replacements, and checks it now (re-send, replace, mined, consumed) as {@link tick} does.
   */
  follow(
    raw: string,
    options: { label?: string; persist?: SendRequest["persist"] } = {},
  ): Promise<SendStatus> {
    return this.mutex.run(async () => {
      const inFlight = await this.loaded();
      const tx = Transaction.from(raw);
      if (tx.from === null || getAddress(tx.from) !== this.address) {
        throw new Error(`transaction ${tx.hash} is not signed by the operator account`);
      }
      const entry = inFlight.get(tx.nonce);
      const hash = tx.hash!;
      if (entry && callKey(entry.to, entry.data) === callKey(tx.to ?? "", tx.data)) {
        if (!entry.versions.some((v) => v.hash === hash)) {
          entry.versions.splice(entry.versions.length - 1, 0, { hash, raw, sentBlock: 0 });
        }
        entry.persist = options.persist ?? entry.persist;
      } else if (entry) {
        // The journal holds another call at this nonce: this transaction can only have been mined first.
        const receipt = await this.provider.getTransactionReceipt(hash);
        const label = options.label ?? "call";
        if (receipt) return { state: "mined", nonce: tx.nonce, hash, label, receipt };
        return { state: "consumed", nonce: tx.nonce, hash, label, cancelled: false };
      } else {
        inFlight.set(tx.nonce, {
          nonce: tx.nonce,
          label: options.label ?? "call",
          signedAt: this.clock.nowSeconds(),
          to: getAddress(tx.to ?? ""),
          data: tx.data,
          gasLimit: tx.gasLimit,
          versions: [{ hash, raw, sentBlock: await this.provider.getBlockNumber() }],
          mined: null,
          persist: options.persist,
        });
      }
      const [head, minedCount] = await this.chainPosition();
      const status = await this.check(inFlight.get(tx.nonce)!, head, minedCount);
      await this.saveJournal();
      return status;
    });
  }

  /**
   * Pushes every unfinished send one step (a background task): mined → finished once confirmed;
   * nonce used by another transaction → consumed; unknown to the node → re-sent; older than
   * `replaceAfterBlocks` → replaced with higher fees (or cancelled, when the node refuses it for a
   * reason no fee cures). Answers each send's status, lowest nonce first.
   */
  tick(): Promise<SendStatus[]> {
    return this.mutex.run(async () => {
      const inFlight = await this.loaded();
      if (inFlight.size === 0) return [];
      const [head, minedCount] = await this.chainPosition();
      if (this.nextNonce !== null && minedCount > this.nextNonce)
        await this.reconcile("external", minedCount);
      const statuses: SendStatus[] = [];
      for (const nonce of [...inFlight.keys()].sort((a, b) => a - b)) {
        statuses.push(await this.check(inFlight.get(nonce)!, head, minedCount));
      }
      await this.saveJournal();
      return statuses;
    });
  }

  /** Unfinished sends (newest version each), lowest nonce first. */
  async unfinished(): Promise<SignedTransaction[]> {
    return this.mutex.run(async () =>
      [...(await this.loaded()).values()].sort((a, b) => a.nonce - b.nonce).map(signedOf),
    );
  }

  // ---- internals (all run under the mutex) ----

  private async loaded(): Promise<Map<number, InFlight>> {
    if (this.inFlight) return this.inFlight;
    const inFlight = new Map<number, InFlight>();
    const stored = await this.store.operatorState.getOperatorState(this.journalKey);
    if (stored !== null) {
      let journal: JournalJson;
      try {
        journal = JSON.parse(stored) as JournalJson;
        for (const t of journal.transactions) for (const v of t.versions) Transaction.from(v.raw);
      } catch (error) {
        // Sending on would risk signing a second transaction for a call already in flight.
        throw new Error(
          `operator_state ${this.journalKey}: unreadable sender journal (${(error as Error).message}); ` +
            "no operator transaction is sent until it is repaired",
        );
      }
      for (const t of journal.transactions) {
        const tx = Transaction.from(t.versions[0].raw); // the call itself (later versions may be a cancel)
        inFlight.set(t.nonce, {
          nonce: t.nonce,
          label: t.label,
          signedAt: t.signedAt,
          to: getAddress(tx.to ?? ""),
          data: tx.data,
          gasLimit: tx.gasLimit,
          versions: t.versions,
          mined: null,
        });
      }
      if (inFlight.size > 0) {
        this.logger.info(
          { nonces: [...inFlight.keys()], address: this.address },
          "operator transactions resumed from the journal",
        );
      }
    }
    this.inFlight = inFlight;
    return inFlight;
  }

  private async saveJournal(): Promise<void> {
    const inFlight = this.inFlight!;
    const journal: JournalJson = {
      transactions: [...inFlight.values()]
        .sort((a, b) => a.nonce - b.nonce)
        .map((e) => ({ nonce: e.nonce, label: e.label, signedAt: e.signedAt, versions: e.versions })),
    };
    await this.store.operatorState.setOperatorState(
      this.journalKey,
      journal.transactions.length === 0 ? null : JSON.stringify(journal),
    );
  }

  /** The next free nonce: the local counter, past every nonce still in flight. */
  private async allocateNonce(): Promise<number> {
    const inFlight = this.inFlight!;
    let nonce = this.nextNonce ?? (await this.pendingCount());
    while (inFlight.has(nonce)) nonce++;
    this.nextNonce = nonce + 1;
    return nonce;
  }

  /** After a nonce error (or an external transaction): the counter restarts from the chain. */
  private async reconcile(reason: string, nonce: number): Promise<void> {
    const before = this.nextNonce;
    this.nextNonce = null;
    const pending = await this.pendingCount();
    this.logger.warn(
      { reason, nonce, local_next: before, chain_pending: pending, address: this.address },
      "operator nonce reconciled with the chain",
    );
  }

  private pendingCount(): Promise<number> {
    return this.provider.getTransactionCount(this.address, "pending");
  }

  /** True when every nonce in [from, nonce) is one of ours in flight. */
  private coveredBelow(nonce: number, from: number): boolean {
    for (let n = from; n < nonce; n++) if (!this.inFlight!.has(n)) return false;
    return true;
  }

  /** Head block and mined nonce count, read together BEFORE any receipt (see `check`). */
  private async chainPosition(): Promise<[number, number]> {
    const minedCount = await this.provider.getTransactionCount(this.address, "latest");
    const head = await this.provider.getBlockNumber();
    return [head, minedCount];
  }

  private async check(entry: InFlight, head: number, minedCount: number): Promise<SendStatus> {
    const inFlight = this.inFlight!;
    const newest = entry.versions[entry.versions.length - 1];
    const base = { nonce: entry.nonce, label: entry.label };
    // 1. Any version mined? (newest first: it is the likeliest)
    for (const version of [...entry.versions].reverse()) {
      const receipt = await this.provider.getTransactionReceipt(version.hash);
      if (!receipt) continue;
      if (entry.mined?.hash !== receipt.hash) {
        this.logger.info(
          {
            ...base,
            tx: receipt.hash,
            block: receipt.blockNumber,
            status: receipt.status === 1 ? "success" : "reverted",
            replacement: version !== entry.versions[0],
            cancel: version.cancel === true,
          },
          version.cancel
            ? "operator transaction cancelled (its nonce went to a transfer to itself)"
            : "operator transaction mined",
        );
      }
      entry.mined = { hash: receipt.hash, blockNumber: receipt.blockNumber };
      if (head - receipt.blockNumber >= this.policy.confirmations) inFlight.delete(entry.nonce);
      if (version.cancel) return { state: "consumed", ...base, hash: receipt.hash, cancelled: true };
      return { state: "mined", ...base, hash: receipt.hash, receipt };
    }
    if (entry.mined) {
      this.logger.warn(
        { ...base, tx: entry.mined.hash },
        "operator transaction reorged out; following it again",
      );
      entry.mined = null;
    }
    // 2. Nonce used, none of ours mined. The count was read before the receipts, so a version mined
    //    in between would have been found above.
    if (minedCount > entry.nonce) {
      this.logger.warn(
        { ...base, txs: entry.versions.map((v) => v.hash) },
        "operator transaction's nonce used by another transaction; it was never executed",
      );
      inFlight.delete(entry.nonce);
      await this.reconcile("consumed", entry.nonce);
      return { state: "consumed", ...base, hash: newest.hash, cancelled: false };
    }
    // 3. Dropped: no version is known to the node any more (evicted, node restarted, never arrived).
    let known = false;
    for (const version of [...entry.versions].reverse()) {
      if (await this.provider.getTransaction(version.hash)) {
        known = true;
        break;
      }
    }
    if (!known) {
      const outcome = await this.broadcast(newest.raw);
      const fields = { ...base, tx: newest.hash, outcome: outcome.kind };
      if (outcome.kind === "accepted" || outcome.kind === "known") {
        delete newest.refused;
        this.logger.warn(fields, "operator transaction re-sent (not known to the node)");
      } else {
        newest.refused = outcome.kind;
        this.logger.warn({ ...fields, err: outcome.error }, "operator transaction re-send refused");
      }
    }
    // 4. Past the bound since the newest version: raise its fees, or give its nonce up.
    if (head - newest.sentBlock >= this.policy.replaceAfterBlocks) {
      return { state: "pending", ...base, hash: await this.unstick(entry, head) };
    }
    return { state: "pending", ...base, hash: newest.hash };
  }

  /**
   * The newest version has not been mined within the bound. Pending in the pool, or refused for its
   * fees: the call is signed again at its nonce with both fees raised. Refused for anything else (gas
   * limit, size, the node's fee cap, funds): no fee makes it acceptable and every later nonce waits
   * behind it, so its nonce goes to a zero-value transfer to the operator itself (a cancel).
   */
  private async unstick(entry: InFlight, head: number): Promise<string> {
    const newest = entry.versions[entry.versions.length - 1];
    const fields = { label: entry.label, nonce: entry.nonce, tx: newest.hash };
    if (newest.refused === "nonce_too_high") return newest.hash; // waits for our lower nonces
    // "nonce too low": mined or consumed, the next tick tells which.
    if (newest.refused === "nonce_too_low") return newest.hash;
    const cancel = newest.refused === "failed";
    if (cancel && newest.cancel) {
      this.logger.error(fields, "operator transaction refused and its cancel too: the account is blocked");
      newest.sentBlock = head; // once per bound, not every tick
      return newest.hash;
    }
    if (entry.versions.length >= MAX_VERSIONS) {
      this.logger.error(
        { ...fields, versions: entry.versions.length },
        "operator transaction not replaced: too many versions",
      );
      newest.sentBlock = head;
      return newest.hash;
    }
    const old = feesOf(newest.raw);
    const bps = BigInt(this.policy.feeBumpBps);
    const market = await this.marketFees();
    const fees = this.capped({
      maxFeePerGas: max(bump(old.maxFeePerGas, bps), market.maxFeePerGas),
      maxPriorityFeePerGas: max(bump(old.maxPriorityFeePerGas, bps), market.maxPriorityFeePerGas),
    });
    if (
      fees.maxFeePerGas < bump(old.maxFeePerGas, bps) ||
      fees.maxPriorityFeePerGas < bump(old.maxPriorityFeePerGas, bps)
    ) {
      this.logger.warn(
        { ...fields, ...feeFields(old), cap: String(this.policy.maxFeePerGas) },
        "operator transaction stuck at the fee ceiling; not replaced",
      );
      newest.sentBlock = head;
      return newest.hash;
    }
    const signed = await this.signVersion(entry, fees, head, cancel);
    try {
      // A cancel is not the caller's call: only the journal holds it.
      if (!cancel) await entry.persist?.(signed);
      await this.saveJournal();
    } catch (error) {
      entry.versions.pop(); // not persisted, so never broadcast: the next bound tries again
      throw error;
    }
    const outcome = await this.broadcast(signed.raw);
    const logged = {
      ...fields,
      tx: signed.hash,
      replaces: newest.hash,
      ...feeFields(fees),
      outcome: outcome.kind,
    };
    const message = cancel
      ? "operator transaction cancelled: refused by the node"
      : "operator transaction replaced with higher fees";
    if (outcome.kind === "accepted" || outcome.kind === "known") {
      this.logger.info(logged, message);
    } else {
      // Kept as a version all the same (it is signed and persisted); the next bound starts from it.
      entry.versions[entry.versions.length - 1].refused = outcome.kind;
      this.logger.warn({ ...logged, err: outcome.error }, `${message} (refused)`);
    }
    return signed.hash;
  }

  private async signVersion(
    entry: InFlight,
    fees: Fees,
    head: number,
    cancel = false,
  ): Promise<SignedTransaction> {
    const call = cancel
      ? { to: this.address, data: "0x", gasLimit: TRANSFER_GAS }
      : { to: entry.to, data: entry.data, gasLimit: entry.gasLimit };
    const raw = await this.wallet.signTransaction({
      ...call,
      nonce: entry.nonce,
      chainId: this.chainId,
      type: 2,
      ...fees,
    });
    const hash = Transaction.from(raw).hash!;
    entry.versions.push(
      cancel ? { hash, raw, sentBlock: head, cancel: true } : { hash, raw, sentBlock: head },
    );
    return { hash, nonce: entry.nonce, raw, gasLimit: call.gasLimit };
  }

  private async marketFees(): Promise<Fees> {
    const data = await this.provider.getFeeData();
    const maxPriorityFeePerGas = data.maxPriorityFeePerGas ?? 0n;
    const maxFeePerGas = data.maxFeePerGas ?? data.gasPrice ?? maxPriorityFeePerGas;
    return { maxFeePerGas: max(maxFeePerGas, maxPriorityFeePerGas), maxPriorityFeePerGas };
  }

  private capped(fees: Fees): Fees {
    const cap = this.policy.maxFeePerGas;
    if (cap === null) return fees;
    return {
      maxFeePerGas: min(fees.maxFeePerGas, cap),
      maxPriorityFeePerGas: min(fees.maxPriorityFeePerGas, cap),
    };
  }

  /** `eth_sendRawTransaction`, with the node's answer classified. Overridden by crash tests. */
  protected async broadcast(raw: string): Promise<BroadcastOutcome> {
    try {
      await this.provider.broadcastTransaction(raw);
      return { kind: "accepted" };
    } catch (error) {
      return classify(error);
    }
  }
}

function signedOf(entry: InFlight): SignedTransaction {
  const newest = entry.versions.filter((v) => !v.cancel).pop()!;
  return { hash: newest.hash, nonce: entry.nonce, raw: newest.raw, gasLimit: entry.gasLimit };
}

function feesOf(raw: string): Fees {
  const tx = Transaction.from(raw);
  return { maxFeePerGas: tx.maxFeePerGas ?? 0n, maxPriorityFeePerGas: tx.maxPriorityFeePerGas ?? 0n };
}

function feeFields(fees: Fees): { max_fee_per_gas: string; max_priority_fee_per_gas: string } {
  return {
    max_fee_per_gas: String(fees.maxFeePerGas),
    max_priority_fee_per_gas: String(fees.maxPriorityFeePerGas),
  };
}

function max(a: bigint, b: bigint): bigint {
  return a > b ? a : b;
}

function min(a: bigint, b: bigint): bigint {
  return a < b ? a : b;
}
