/**
 * Chain time across `evm_snapshot` / `evm_revert` on the in-process Hardhat chain (registered for the
 * `hardhat` network by hardhat.config.ts).
 *
 * EDR, the chain behind Hardhat 2.29, means to freeze time at a snapshot (its comment: "now + new_offset ==
 * snapshot_date + old_offset") but adds the seconds elapsed since the snapshot to the offset instead of
 * subtracting them: after a revert E seconds later the next block is stamped 2·E seconds after the
 * snapshot's (measured here: E = 2, 5, 10 s → +4, +10, +20 s). Every `loadFixture` is such a revert, so a
 * fixture that committed a cycle whose challenge window is 30 s saw that window close when the suite spent
 * 15 s elsewhere before loading it again: `ChallengeWindowClosed` on a loaded host only.
 *
 * This wrapper records, at each snapshot, the timestamp the next block would have had then (the pending
 * block's), and after a successful revert to that snapshot stamps the next block with it: a reverted chain
 * resumes where its snapshot left it, however long the host took meanwhile. Later blocks follow the wall
 * clock from there, as after any `evm_setNextBlockTimestamp`, and a test may still move time itself.
 */
import { ProviderWrapper } from "hardhat/plugins";
import type { EIP1193Provider, RequestArguments } from "hardhat/types";

export class SnapshotClockProvider extends ProviderWrapper {
  /** Snapshot id → the pending block's timestamp (an RPC quantity) when it was taken. */
  private readonly resumeAt = new Map<bigint, string>();

  constructor(provider: EIP1193Provider) {
    super(provider);
  }

  override async request(args: RequestArguments): Promise<unknown> {
    if (args.method === "evm_snapshot") {
      const pending = (await this._wrappedProvider.request({
        method: "eth_getBlockByNumber",
        params: ["pending", false],
      })) as { timestamp: string };
      const id = await this._wrappedProvider.request(args);
      this.resumeAt.set(BigInt(id as string), pending.timestamp);
      return id;
    }
    if (args.method === "evm_revert") {
      const reverted = await this._wrappedProvider.request(args);
      const [param] = this._getParams<[string]>(args);
      const id = BigInt(param ?? -1);
      if (reverted !== true) return reverted;
      const timestamp = this.resumeAt.get(id);
      // As in Ganache, a revert drops its snapshot and every later one.
      for (const taken of [...this.resumeAt.keys()]) if (taken >= id) this.resumeAt.delete(taken);
      if (timestamp !== undefined) {
        await this._wrappedProvider.request({ method: "evm_setNextBlockTimestamp", params: [timestamp] });
      }
      return reverted;
    }
    return this._wrappedProvider.request(args);
  }
}
