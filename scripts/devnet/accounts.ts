/**
 * Devnet accounts: Hardhat's public development mnemonic and the role each
 * account plays. These keys are printed by every Hardhat node and known to
 * everyone: never send value to them on a real network.
 */
import { HDNodeWallet, Mnemonic } from "ethers";

/** Hardhat's default mnemonic (its node funds the first 20 accounts with 10 000 ETH each). */
export const HARDHAT_MNEMONIC = "test test test test test test test test test test test junk";
/** Accounts a Hardhat node funds with ETH. */
export const HARDHAT_ACCOUNT_COUNT = 20;

/**
 * Who is who on the devnet. Accounts 1 and 2 are the buyer and the seller of
 * `examples/`; the service accounts sit at the end of the list so that the
 * low indexes stay free for people to play with.
 */
export const DEVNET_ROLES = {
  /** Deploys the contracts and holds every admin role. */
  deployer: 0,
  /** The official x402 `exact` facilitator's wallet (`--with-exact`): sends `transferWithAuthorization`. */
  exactFacilitator: 16,
  /** ClearingHouse GUARDIAN_ROLE (vetoes a cycle inside its challenge window): not the operator's key. */
  guardian: 17,
  /** Core's operator EOA: ClearingHouse OPERATOR_ROLE (commits cycles). */
  operator: 18,
  /** The facilitator's wallet (its SIWE identity towards Core; in Core's facilitator list). */
  facilitator: 19,
} as const;

/** Accounts that get test tokens and are listed as "dev accounts" (0 … 9). */
export const FUNDED_ACCOUNT_COUNT = 10;

export interface DevAccount {
  index: number;
  address: string;
  privateKey: string;
}

const cache = new Map<number, DevAccount>();

/** Account `index` of the Hardhat mnemonic (path m/44'/60'/0'/0/index). */
export function devAccount(index: number): DevAccount {
  if (!Number.isSafeInteger(index) || index < 0 || index >= HARDHAT_ACCOUNT_COUNT) {
    throw new Error(
      `dev account index must be an integer from 0 to ${HARDHAT_ACCOUNT_COUNT - 1}, got ${index}`,
    );
  }
  let account = cache.get(index);
  if (account === undefined) {
    const wallet = HDNodeWallet.fromMnemonic(
      Mnemonic.fromPhrase(HARDHAT_MNEMONIC),
      `m/44'/60'/0'/0/${index}`,
    );
    account = { index, address: wallet.address, privateKey: wallet.privateKey };
    cache.set(index, account);
  }
  return account;
}

/** The first `count` dev accounts. */
export function devAccounts(count: number): DevAccount[] {
  return Array.from({ length: count }, (_, i) => devAccount(i));
}
