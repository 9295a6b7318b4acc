/**
 * Core's view of the contracts: the typechain interfaces generated from `contracts/*.sol` by
 * `hardhat compile` (`npm run operator` compiles first), so every selector, topic and error Core
 * encodes or decodes is the compiled contract's own — there is no second copy of an ABI to drift.
 */
import { Contract, ErrorFragment, Interface, type ContractRunner } from "ethers";
import {
  ClearingHouse__factory,
  ValidationRegistry__factory,
  Vault__factory,
  type ClearingHouse,
  type Vault,
} from "../../typechain-types";
import type { ChainProvider } from "./provider";

export const vaultInterface = Vault__factory.createInterface();
export const clearingHouseInterface = ClearingHouse__factory.createInterface();
export const validationRegistryInterface = ValidationRegistry__factory.createInterface();

/**
 * Errors a ClearingHouse call can revert with come from both contracts (the Vault's bubble up).
 * Both inherit some (OpenZeppelin's, shared custom errors): each signature is listed once.
 */
export const commitErrorsInterface = new Interface(
  (() => {
    const seen = new Set<string>();
    return [...clearingHouseInterface.fragments, ...vaultInterface.fragments].filter((fragment) => {
      if (!ErrorFragment.isFragment(fragment)) return false;
      const signature = fragment.format("sighash");
      if (seen.has(signature)) return false;
      seen.add(signature);
      return true;
    });
  })(),
);

/**
 * A read-only runner over Core's provider: view calls of the typed contracts go through the
 * provider's `eth_call` (Core's provider is a narrowed ethers Provider, not a full runner).
 */
function reader(provider: Pick<ChainProvider, "call">): ContractRunner {
  return { provider: null, call: (tx) => provider.call(tx) };
}

// Over the interfaces above, parsed once: a typechain factory's `connect` parses the whole ABI again on every
// call (≈ 0.4 ms for the ClearingHouse), and the clearing scheduler and bond monitor build one on every tick.

/** The Vault at `address`, for view calls. */
export function vaultAt(address: string, provider: Pick<ChainProvider, "call">): Vault {
  return new Contract(address, vaultInterface, reader(provider)) as unknown as Vault;
}

/** The ClearingHouse at `address`, for view calls. */
export function clearingHouseAt(address: string, provider: Pick<ChainProvider, "call">): ClearingHouse {
  return new Contract(address, clearingHouseInterface, reader(provider)) as unknown as ClearingHouse;
}

/** Vault.Consumption: how a V2 guarantee id was used up. */
export const CONSUMPTION = { none: 0, remunerated: 1, netted: 2 } as const;
