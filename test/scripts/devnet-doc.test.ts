/**
 * docs/devnet.md gives an integrator in any language the devnet's keys without running it: the public
 * mnemonic and derivation path, the accounts the devnet prints with their roles, and the operator's BLS
 * key material with the secret and public key KeyGen derives from it. Recomputed here from the code
 * the devnet runs, so the page cannot drift from it.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { expect } from "chai";
import { hexlify } from "ethers";
import { blsKeyFromSecret } from "../../sdk/bls";
import { DEVNET_BLS_IKM } from "../../scripts/deploy";
import {
  DEVNET_ROLES,
  FUNDED_ACCOUNT_COUNT,
  HARDHAT_MNEMONIC,
  devAccount,
} from "../../scripts/devnet/accounts";

const page = readFileSync(path.join(__dirname, "..", "..", "docs", "devnet.md"), "utf8");

/** The table row of dev account `index` (`| #i | address | key | role |`). */
function row(index: number): string {
  const line = page.split("\n").find((text) => text.startsWith(`| #${index} |`));
  expect(line, `docs/devnet.md has no row for account #${index}`).to.be.a("string");
  return line!;
}

describe("docs/devnet.md keys and accounts", () => {
  it("give the mnemonic and the derivation path", () => {
    expect(page).to.include("```\n" + HARDHAT_MNEMONIC + "\n```");
    expect(page).to.include("`m/44'/60'/0'/0/i`");
  });

  it("list every account the devnet prints with its address and key, and the service roles", () => {
    const service = Object.values(DEVNET_ROLES);
    for (const index of [...Array(FUNDED_ACCOUNT_COUNT).keys(), ...service]) {
      const account = devAccount(index);
      expect(row(index)).to.include(`\`${account.address}\` | \`${account.privateKey}\``);
    }
    expect(row(DEVNET_ROLES.deployer)).to.include("deployer and admin");
    expect(row(DEVNET_ROLES.guardian)).to.include("`GUARDIAN_ROLE`");
    expect(row(DEVNET_ROLES.operator)).to.include("`OPERATOR_ROLE`");
    expect(row(DEVNET_ROLES.facilitator)).to.include("`SURETY_FACILITATORS`");
  });

  it("give the operator's BLS key material, the KeyGen secret and the public key", () => {
    expect(page).to.include(DEVNET_BLS_IKM);
    const key = blsKeyFromSecret(DEVNET_BLS_IKM);
    expect(page).to.include(hexlify(key.secretKey));
    expect(page).to.include(hexlify(key.publicKey));
    expect(page).to.include("IETF `KeyGen(IKM)`");
  });
});
