/**
 * Contract-wallet payers' registered signing keys at issuance (docs/protocol.md "Payer signatures"): a
 * signature that does not recover to `user_address` is the payer's only if it recovers to the key the payer
 * registered in the Vault (`Vault.setGuaranteeSigner`), as `remunerate`, `registerReserve` and the
 * ClearingHouse's dispute answers check it (contracts/lib/GuaranteeSignature.sol). Never ERC-1271: a wallet
 * could revoke that answer after Core accepted the signature (issue 25, item 3).
 *
 * Core reads `Vault.guaranteeSigner(payer)` at the block it has indexed (the chain clock's head, reorg-safe
 * at its confirmation depth) rather than indexing `GuaranteeSignerSet`: only payers whose ECDSA recovery
 * failed cost a read, an EOA payer none, and no table or migration is needed. Answers are cached per payer
 * until Core indexes another block, so a burst of one wallet's payments costs one `eth_call` per block.
 */
import type { RegisteredSigningKey } from "../../sdk/signing-keys";
import type { ChainGateway } from "../chain/gateway";

/** Payers remembered for one indexed block; beyond it the cache starts over (bad signatures cannot grow it). */
const MAX_CACHED_PAYERS = 10_000;

export class PayerSigningKeys {
  private block: number | undefined;
  private readonly cache = new Map<string, Promise<RegisteredSigningKey | null>>();

  constructor(
    private readonly chain: Required<Pick<ChainGateway, "vaultGuaranteeSigner">>,
    private readonly vault: string,
  ) {}

  /** A reader over `chain`, or null when the gateway cannot read the Vault's keys (EOA signatures only). */
  static over(chain: ChainGateway, vault: string): PayerSigningKeys | null {
    const { vaultGuaranteeSigner } = chain;
    if (vaultGuaranteeSigner === undefined) return null;
    return new PayerSigningKeys({ vaultGuaranteeSigner: vaultGuaranteeSigner.bind(chain) }, vault);
  }

  /**
   * `payer`'s latest registered key at block `blockNumber` (undefined: the latest block; not cached), or null
   * when it has none. Throws the gateway's ChainError when the chain cannot be asked (nothing is cached then).
   */
  async latest(payer: string, blockNumber?: number): Promise<RegisteredSigningKey | null> {
    if (blockNumber === undefined) return this.read(payer, undefined);
    if (blockNumber !== this.block || this.cache.size >= MAX_CACHED_PAYERS) {
      this.block = blockNumber;
      this.cache.clear();
    }
    const key = payer.toLowerCase();
    let answer = this.cache.get(key);
    if (answer === undefined) {
      answer = this.read(payer, blockNumber);
      this.cache.set(key, answer);
      answer.catch(() => {
        if (this.cache.get(key) === answer) this.cache.delete(key);
      });
    }
    return answer;
  }

  private async read(payer: string, blockNumber: number | undefined): Promise<RegisteredSigningKey | null> {
    const latest = await this.chain.vaultGuaranteeSigner(this.vault, payer, blockNumber);
    return /^0x0{40}$/i.test(latest.key) ? null : latest;
  }
}
