/**
 * The operator account's transactions (cycle commits, keeper calls), one at a time: each gets the
 * account's next nonce explicitly, is estimated first (a revert is reported with its decoded error and
 * nothing is sent), signed, handed to `beforeBroadcast` (the scheduler persists the signed bytes there,
 * so a restart rebroadcasts exactly that transaction — same nonce, same hash — instead of a second
 * one), then broadcast.
 */
import { type ErrorDescription, type Interface, keccak256, type TransactionReceipt, Wallet } from "ethers";
import { AsyncMutex } from "../store/mutex";
import type { ChainProvider } from "./indexer";

export interface SignedTransaction {
  hash: string;
  nonce: number;
  raw: string;
  gasLimit: bigint;
}

/** A call would revert; `error` is the decoded custom error when the ABI knows it. */
export class CallRevertedError extends Error {
  override readonly name = "CallRevertedError";
  constructor(
    readonly error: ErrorDescription | null,
    readonly data: string | null,
    cause: unknown,
  ) {
    super(
      error
        ? `reverted with ${error.name}(${error.args.map(String).join(", ")})`
        : `reverted: ${String(cause)}`,
    );
  }
}

/** Extra gas over the estimate (state may move a little between estimate and inclusion). */
export const GAS_HEADROOM_PERCENT = 20n;

function revertData(error: unknown): string | null {
  const seen = new Set<unknown>();
  let current: unknown = error;
  while (current && typeof current === "object" && !seen.has(current)) {
    seen.add(current);
    const data = (current as { data?: unknown }).data;
    if (typeof data === "string" && /^0x[0-9a-fA-F]*$/.test(data) && data.length >= 10) return data;
    if (data && typeof data === "object" && typeof (data as { data?: unknown }).data === "string") {
      return (data as { data: string }).data;
    }
    current =
      (current as { error?: unknown; info?: unknown; cause?: unknown }).error ??
      (current as { info?: { error?: unknown } }).info?.error ??
      (current as { cause?: unknown }).cause;
  }
  return null;
}

function isRevert(error: unknown): boolean {
  const code = (error as { code?: string }).code;
  const message = String((error as Error).message ?? error);
  return code === "CALL_EXCEPTION" || /revert/i.test(message) || revertData(error) !== null;
}

export class OperatorSender {
  private readonly mutex = new AsyncMutex();
  readonly wallet: Wallet;

  constructor(
    privateKey: string,
    private readonly provider: ChainProvider,
    private readonly chainId: bigint,
  ) {
    this.wallet = new Wallet(privateKey);
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
   * Estimates, signs with the next nonce, calls `beforeBroadcast` (persist it there), broadcasts.
   * `gasLimit` skips the estimate (the caller estimated already).
   */
  async send(
    to: string,
    data: string,
    errors: Interface,
    options: { gasLimit?: bigint; beforeBroadcast?: (tx: SignedTransaction) => Promise<void> } = {},
  ): Promise<SignedTransaction> {
    return this.mutex.run(async () => {
      const estimate = options.gasLimit ?? (await this.estimate(to, data, errors));
      const gasLimit = options.gasLimit ?? (estimate * (100n + GAS_HEADROOM_PERCENT)) / 100n;
      const nonce = await this.provider.getTransactionCount(this.address, "pending");
      const fees = await this.provider.getFeeData();
      const raw = await this.wallet.signTransaction({
        to,
        data,
        nonce,
        gasLimit,
        chainId: this.chainId,
        type: 2,
        maxFeePerGas: fees.maxFeePerGas ?? fees.gasPrice ?? undefined,
        maxPriorityFeePerGas: fees.maxPriorityFeePerGas ?? 0n,
      });
      const signed: SignedTransaction = { hash: keccak256(raw), nonce, raw, gasLimit };
      await options.beforeBroadcast?.(signed);
      await this.broadcast(raw);
      return signed;
    });
  }

  /** Sends signed bytes again; "already known" (or already mined) is success. */
  async broadcast(raw: string): Promise<void> {
    try {
      await this.provider.broadcastTransaction(raw);
    } catch (error) {
      const message = String((error as Error).message ?? error).toLowerCase();
      if (
        message.includes("already known") ||
        message.includes("nonce too low") ||
        message.includes("known transaction")
      ) {
        return;
      }
      throw error;
    }
  }

  receipt(hash: string): Promise<TransactionReceipt | null> {
    return this.provider.getTransactionReceipt(hash);
  }

  /** Transactions of the operator account mined so far (its next unmined nonce). */
  minedNonce(): Promise<number> {
    return this.provider.getTransactionCount(this.address, "latest");
  }
}
