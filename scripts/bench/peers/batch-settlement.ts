/**
 * x402 `batch-settlement` on a local chain: the from-spec escrow (contracts/test/batch-settlement/, FOR
 * BENCHMARKING ONLY) installed at the canonical addresses the official `@x402/evm` client, server and facilitator
 * hard-code, and the official facilitator with a viem signer. Used by `npm run bench:vs-peers` and by
 * test/contracts/batch-settlement-official.test.ts.
 */
import { x402Facilitator } from "@x402/core/facilitator";
import type { FacilitatorClient } from "@x402/core/server";
import type { Network } from "@x402/core/types";
import { toFacilitatorEvmSigner } from "@x402/evm";
import { BatchSettlementEvmScheme as BatchFacilitatorScheme } from "@x402/evm/batch-settlement/facilitator";
import type { Signer } from "ethers";
import { type Chain, type Transport, createWalletClient, publicActions } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import {
  BatchSettlementFromSpec__factory,
  Erc3009DepositCollectorFromSpec__factory,
  Multicall3Subset__factory,
} from "../../../typechain-types";

/** Where the official package expects the escrow, its ERC-3009 collector and Multicall3 (`@x402/evm` 2.27). */
export const CANONICAL = {
  batchSettlement: "0x4020074e9dF2ce1deE5A9C1b5c3f541D02a10003",
  erc3009Collector: "0x4020806089470a89826cB9fB1f4059150b550004",
  multicall3: "0xcA11bde05977b3631167028862bE2a173976CA11",
} as const;

/**
 * Deploys the from-spec contracts with `deployer` and copies their runtime code to the canonical addresses
 * (`hardhat_setCode`): the escrow keeps no constructor-set storage (EIP-712 fields are immutables in the code) and
 * the collector's escrow address is an immutable set to the canonical escrow address.
 */
export async function installBatchSettlementFromSpec(
  deployer: Signer,
  rpc: (method: string, params: unknown[]) => Promise<unknown>,
): Promise<void> {
  const provider = deployer.provider!;
  const deployed = [
    [await new BatchSettlementFromSpec__factory(deployer).deploy(), CANONICAL.batchSettlement],
    [
      await new Erc3009DepositCollectorFromSpec__factory(deployer).deploy(CANONICAL.batchSettlement),
      CANONICAL.erc3009Collector,
    ],
    [await new Multicall3Subset__factory(deployer).deploy(), CANONICAL.multicall3],
  ] as const;
  for (const [contract, at] of deployed) {
    await contract.waitForDeployment();
    const code = await provider.getCode(await contract.getAddress());
    await rpc("hardhat_setCode", [at, code]);
  }
}

/**
 * The official batch-settlement facilitator (`x402Facilitator` + `@x402/evm`'s scheme) with a viem signer over
 * `transport`. Transactions of the one signer are sent in nonce order (an automining node cannot queue a nonce
 * gap); receipts are awaited concurrently. `authorizerKey` is the receiver authorizer the facilitator advertises
 * (servers delegate claim and refund signatures to it).
 */
export function batchSettlementFacilitator(options: {
  chain: Chain;
  transport: Transport;
  network: Network;
  signerKey: `0x${string}`;
  authorizerKey: `0x${string}`;
  pollingInterval?: number;
  onSendError?: (error: unknown) => void;
}): { facilitator: x402Facilitator; client: FacilitatorClient; address: `0x${string}` } {
  const account = privateKeyToAccount(options.signerKey);
  const wallet = createWalletClient({
    account,
    chain: options.chain,
    transport: options.transport,
    pollingInterval: options.pollingInterval ?? 50,
  }).extend(publicActions);
  let sending: Promise<unknown> = Promise.resolve();
  const serialised = <T>(send: () => Promise<T>): Promise<T> => {
    const next = sending.then(async () => {
      try {
        return await send();
      } catch (error) {
        options.onSendError?.(error);
        throw error;
      }
    });
    sending = next.catch(() => undefined);
    return next;
  };
  const signer = toFacilitatorEvmSigner({
    address: account.address,
    readContract: (args) => wallet.readContract(args as never),
    verifyTypedData: (args) => wallet.verifyTypedData(args as never),
    writeContract: (args) =>
      serialised(() => wallet.writeContract({ ...args, account, chain: options.chain } as never)),
    sendTransaction: (args) =>
      serialised(() => wallet.sendTransaction({ ...args, account, chain: options.chain })),
    waitForTransactionReceipt: (args) => wallet.waitForTransactionReceipt(args) as never,
    getCode: (args) => wallet.getCode(args),
  });
  const authorizer = privateKeyToAccount(options.authorizerKey);
  const facilitator = new x402Facilitator().register(
    options.network,
    new BatchFacilitatorScheme(signer, {
      address: authorizer.address,
      signTypedData: (params) => authorizer.signTypedData(params as never),
    }),
  );
  const client: FacilitatorClient = {
    verify: (payload, requirements) => facilitator.verify(payload, requirements),
    settle: (payload, requirements) => facilitator.settle(payload, requirements),
    getSupported: async () => facilitator.getSupported() as never,
  };
  return { facilitator, client, address: account.address };
}
