import { expect } from "chai";
import { ethers } from "hardhat";

// The contracts verify BLS certificates with the EIP-2537 precompiles, which
// exist only from the prague hardfork on. Fail loudly if the config drifts.
describe("toolchain", () => {
  it("runs a prague chain with the EIP-2537 G1ADD precompile", async () => {
    const G1ADD = "0x000000000000000000000000000000000000000b";
    const twoInfinityPoints = "0x" + "00".repeat(256);
    const sum = await ethers.provider.call({ to: G1ADD, data: twoInfinityPoints });
    expect(ethers.dataLength(sum)).to.equal(128);
  });
});
