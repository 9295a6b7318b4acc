/**
 * The prose pages an integrator builds calls from (contracts.md, facilitator.md, protocol.md) name the
 * BLS point types and the selector the compiled Vault has: the certificate signature is a G1 point
 * (solady `BLS.G1Point`, four words), the operator key a G2 point (`BLS.G2Point`, eight words). A page
 * still describing the pre-issue-15 layout (signature in G2) gives the wrong selector.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { expect } from "chai";
import { Vault__factory } from "../../typechain-types";

function page(name: string): string {
  return readFileSync(path.join(__dirname, "..", "..", "docs", name), "utf8");
}

describe("docs name the Vault's BLS point types and selectors", () => {
  const vault = Vault__factory.createInterface();

  it("remunerate takes a G1 signature (four words) under the selector the pages quote", () => {
    const remunerate = vault.getFunction("remunerate");
    expect(remunerate.format("sighash")).to.equal(
      "remunerate(bytes,(bytes32,bytes32,bytes32,bytes32),uint8,bytes)",
    );
    const contracts = page("contracts.md");
    expect(contracts).to.include(
      "remunerate(bytes claims, BLS.G1Point signature, uint8 payerScheme, bytes payerSignature)",
    );
    expect(contracts).to.include(remunerate.format("sighash"));
    expect(contracts).to.not.include("BLS.G2Point signature");
    for (const name of ["contracts.md", "protocol.md"]) expect(page(name)).to.include(remunerate.selector);
  });

  it("operatorKey is a G2 point (eight words) in contracts.md and facilitator.md", () => {
    const key = vault.getFunction("operatorKey").outputs[0];
    expect(key.components?.map((c) => c.name)).to.deep.equal([
      "x_c0_a",
      "x_c0_b",
      "x_c1_a",
      "x_c1_b",
      "y_c0_a",
      "y_c0_b",
      "y_c1_a",
      "y_c1_b",
    ]);
    expect(page("facilitator.md")).to.match(/`operatorKey\(\)` \(a G2 point in EIP-2537 form/);
    expect(page("facilitator.md")).to.not.include("EIP-2537 G1");
  });
});
