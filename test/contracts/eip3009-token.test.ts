/**
 * The EIP-3009 test token that `npm run bench:vs-exact` settles x402 `exact`
 * payments with: both signature forms, every revert path and the events.
 */
import { loadFixture, time } from "@nomicfoundation/hardhat-network-helpers";
import { expect } from "chai";
import { Signature, hexlify, randomBytes, type Signer } from "ethers";
import { ethers } from "hardhat";
import { Eip3009Token__factory } from "../../typechain-types";

const VRS_TRANSFER =
  "transferWithAuthorization(address,address,uint256,uint256,uint256,bytes32,uint8,bytes32,bytes32)" as const;

const TYPES = {
  TransferWithAuthorization: [
    { name: "from", type: "address" },
    { name: "to", type: "address" },
    { name: "value", type: "uint256" },
    { name: "validAfter", type: "uint256" },
    { name: "validBefore", type: "uint256" },
    { name: "nonce", type: "bytes32" },
  ],
};

async function fixture() {
  const [deployer, alice, bob, relayer] = await ethers.getSigners();
  const token = await new Eip3009Token__factory(deployer).deploy("Exact USD", "xUSD");
  await token.mint(alice.address, 1_000_000n);
  const domain = {
    name: "Exact USD",
    version: "2",
    chainId: (await ethers.provider.getNetwork()).chainId,
    verifyingContract: await token.getAddress(),
  };
  return { token, alice, bob, relayer, domain };
}

describe("Eip3009Token (test token for bench:vs-exact)", function () {
  async function authorization(signer: Signer, to: string, overrides: Record<string, unknown> = {}) {
    const { domain } = await loadFixture(fixture);
    const now = BigInt(await time.latest());
    const message = {
      from: await signer.getAddress(),
      to,
      value: 1_000n,
      validAfter: now - 60n,
      validBefore: now + 600n,
      nonce: hexlify(randomBytes(32)),
      ...overrides,
    };
    const signature = await signer.signTypedData(domain, TYPES, message);
    return { message, signature, split: Signature.from(signature) };
  }

  it("serves name and version of its EIP-712 domain", async function () {
    const { token } = await loadFixture(fixture);
    expect(await token.name()).to.equal("Exact USD");
    expect(await token.version()).to.equal("2");
    const domain = await token.eip712Domain();
    expect(domain.version).to.equal("2");
  });

  it("transfers with a (v, r, s) authorization, marks the nonce used and emits AuthorizationUsed + Transfer", async function () {
    const { token, alice, bob, relayer } = await loadFixture(fixture);
    const { message: m, split } = await authorization(alice, bob.address);
    const viaRelayer = token.connect(relayer);
    await expect(
      viaRelayer[VRS_TRANSFER](
        m.from,
        m.to,
        m.value,
        m.validAfter,
        m.validBefore,
        m.nonce,
        split.v,
        split.r,
        split.s,
      ),
    )
      .to.emit(token, "AuthorizationUsed")
      .withArgs(alice.address, m.nonce)
      .and.to.emit(token, "Transfer")
      .withArgs(alice.address, bob.address, 1_000n);
    expect(await token.balanceOf(bob.address)).to.equal(1_000n);
    expect(await token.authorizationState(alice.address, m.nonce)).to.equal(true);
  });

  it("transfers with a bytes signature too", async function () {
    const { token, alice, bob } = await loadFixture(fixture);
    const { message: m, signature } = await authorization(alice, bob.address);
    await expect(
      token["transferWithAuthorization(address,address,uint256,uint256,uint256,bytes32,bytes)"](
        m.from,
        m.to,
        m.value,
        m.validAfter,
        m.validBefore,
        m.nonce,
        signature,
      ),
    ).to.emit(token, "AuthorizationUsed");
    expect(await token.balanceOf(bob.address)).to.equal(1_000n);
  });

  it("reverts: not yet valid, expired, nonce reused, wrong signer, changed value", async function () {
    const { token, alice, bob } = await loadFixture(fixture);
    const send = (m: Record<string, unknown>, signature: string) =>
      token["transferWithAuthorization(address,address,uint256,uint256,uint256,bytes32,bytes)"](
        m.from as string,
        m.to as string,
        m.value as bigint,
        m.validAfter as bigint,
        m.validBefore as bigint,
        m.nonce as string,
        signature,
      );
    const now = BigInt(await time.latest());

    const early = await authorization(alice, bob.address, { validAfter: now + 100n });
    await expect(send(early.message, early.signature))
      .to.be.revertedWithCustomError(token, "AuthorizationNotYetValid")
      .withArgs(now + 100n);

    const late = await authorization(alice, bob.address, { validBefore: now });
    await expect(send(late.message, late.signature))
      .to.be.revertedWithCustomError(token, "AuthorizationExpired")
      .withArgs(now);

    const used = await authorization(alice, bob.address);
    await send(used.message, used.signature);
    await expect(send(used.message, used.signature))
      .to.be.revertedWithCustomError(token, "AuthorizationAlreadyUsed")
      .withArgs(alice.address, used.message.nonce);

    const forged = await authorization(bob, bob.address, { from: alice.address });
    await expect(send(forged.message, forged.signature)).to.be.revertedWithCustomError(
      token,
      "InvalidAuthorizationSignature",
    );

    const changed = await authorization(alice, bob.address);
    await expect(
      send({ ...changed.message, value: 2_000n }, changed.signature),
    ).to.be.revertedWithCustomError(token, "InvalidAuthorizationSignature");
  });
});
