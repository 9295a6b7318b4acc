import { loadFixture, time } from "@nomicfoundation/hardhat-network-helpers";
import { expect } from "chai";
import { ethers } from "hardhat";
import { ZeroAddress, ZeroHash, id as hashText } from "ethers";

import { ValidationRegistry__factory } from "../../typechain-types";

describe("ValidationRegistry", () => {
  const REQUEST = hashText("request 1");
  const AGENT = 42n;
  const RESPONSE_HASH = hashText("evidence");

  async function fixture() {
    const [requester, validator, other, squatter] = await ethers.getSigners();
    const registry = await new ValidationRegistry__factory(requester).deploy();
    return { registry, requester, validator, other, squatter };
  }

  async function requestedFixture() {
    const f = await fixture();
    await f.registry.validationRequest(f.validator.address, AGENT, "ipfs://job", REQUEST);
    return f;
  }

  describe("validationRequest", () => {
    it("records validator, agent and requester and emits ValidationRequest", async () => {
      const { registry, requester, validator } = await loadFixture(fixture);
      await expect(registry.validationRequest(validator.address, AGENT, "ipfs://job", REQUEST))
        .to.emit(registry, "ValidationRequest")
        .withArgs(validator.address, AGENT, "ipfs://job", REQUEST);
      expect(await registry.requestExists(REQUEST, validator.address)).to.equal(true);
      expect(await registry.hasResponse(REQUEST, validator.address)).to.equal(false);
      expect(await registry.requesterOf(REQUEST, validator.address)).to.equal(requester.address);
      const status = await registry.getValidationStatusFor(REQUEST, validator.address);
      expect(status.validatorAddress).to.equal(validator.address);
      expect(status.agentId).to.equal(AGENT);
      expect(status.lastUpdate).to.equal(0n); // no answer yet
    });

    it("rejects a zero validator", async () => {
      const { registry } = await loadFixture(fixture);
      await expect(registry.validationRequest(ZeroAddress, AGENT, "", REQUEST)).to.be.revertedWithCustomError(
        registry,
        "ZeroValidatorAddress",
      );
    });

    it("rejects a zero request hash", async () => {
      const { registry, validator } = await loadFixture(fixture);
      await expect(
        registry.validationRequest(validator.address, AGENT, "", ZeroHash),
      ).to.be.revertedWithCustomError(registry, "ZeroRequestHash");
    });

    it("accepts a repeated request from anyone (an event only: the record keeps its first requester)", async () => {
      const { registry, requester, validator, other } = await loadFixture(requestedFixture);
      await expect(registry.connect(other).validationRequest(validator.address, 7n, "x", REQUEST))
        .to.emit(registry, "ValidationRequest")
        .withArgs(validator.address, 7n, "x", REQUEST);
      expect(await registry.requesterOf(REQUEST, validator.address)).to.equal(requester.address);
      expect((await registry.getValidationStatusFor(REQUEST, validator.address)).agentId).to.equal(AGENT);
    });

    it("lets the named validator re-open its own unanswered request (squatting with a wrong agent id fails)", async () => {
      const { registry, validator, squatter } = await loadFixture(fixture);
      await registry.connect(squatter).validationRequest(validator.address, 666n, "bogus", REQUEST);
      await expect(
        registry.connect(validator).validationRequest(validator.address, AGENT, "ipfs://job", REQUEST),
      )
        .to.emit(registry, "ValidationRequest")
        .withArgs(validator.address, AGENT, "ipfs://job", REQUEST);
      expect((await registry.getValidationStatusFor(REQUEST, validator.address)).agentId).to.equal(AGENT);
      expect(await registry.requesterOf(REQUEST, validator.address)).to.equal(validator.address);
    });

    it("keeps requests to different validators apart (a bogus validator cannot squat the hash)", async () => {
      const { registry, validator, squatter } = await loadFixture(fixture);
      await registry.connect(squatter).validationRequest(squatter.address, AGENT, "bogus", REQUEST);
      await registry.validationRequest(validator.address, AGENT, "ipfs://job", REQUEST);
      await registry.connect(validator).validationResponse(REQUEST, 90, "", RESPONSE_HASH, "ok");
      expect((await registry.getValidationStatusFor(REQUEST, validator.address)).response).to.equal(90);
      expect((await registry.verdictOf(REQUEST, squatter.address)).responded).to.equal(false);
      // No single-key view: which validator it showed was the first requester's choice (finding 7).
      expect(
        registry.interface.fragments.some((f) => "name" in f && f.name === "getValidationStatus"),
      ).to.equal(false);
    });

    it("a request after the answer is an event only: the validator's agent id and verdict stay", async () => {
      const { registry, validator } = await loadFixture(requestedFixture);
      await registry.connect(validator).validationResponse(REQUEST, 80, "", RESPONSE_HASH, "ok");
      await expect(registry.connect(validator).validationRequest(validator.address, 9n, "", REQUEST)).to.emit(
        registry,
        "ValidationRequest",
      );
      const status = await registry.getValidationStatusFor(REQUEST, validator.address);
      expect([status.agentId, status.response]).to.deep.equal([AGENT, 80n]);
    });
  });

  describe("validationResponse", () => {
    it("records the answer and emits ValidationResponse", async () => {
      const { registry, validator } = await loadFixture(requestedFixture);
      const tx = registry
        .connect(validator)
        .validationResponse(REQUEST, 85, "ipfs://answer", RESPONSE_HASH, "quality");
      await expect(tx)
        .to.emit(registry, "ValidationResponse")
        .withArgs(validator.address, AGENT, REQUEST, 85, "ipfs://answer", RESPONSE_HASH, "quality");
      const at = await time.latest();
      const status = await registry.getValidationStatusFor(REQUEST, validator.address);
      expect(status.validatorAddress).to.equal(validator.address);
      expect(status.agentId).to.equal(AGENT);
      expect(status.response).to.equal(85);
      expect(status.responseHash).to.equal(RESPONSE_HASH);
      expect(status.tag).to.equal("quality");
      expect(status.lastUpdate).to.equal(BigInt(at));
      expect(await registry.hasResponse(REQUEST, validator.address)).to.equal(true);
      expect(await registry.verdictOf(REQUEST, validator.address)).to.deep.equal([
        true,
        85n,
        hashText("quality"),
        BigInt(at),
      ]);
    });

    it("lets the validator update its answer (the latest wins)", async () => {
      const { registry, validator } = await loadFixture(requestedFixture);
      await registry.connect(validator).validationResponse(REQUEST, 10, "", RESPONSE_HASH, "a");
      await time.increase(100);
      await registry.connect(validator).validationResponse(REQUEST, 100, "", ZeroHash, "b");
      const status = await registry.getValidationStatusFor(REQUEST, validator.address);
      expect(status.response).to.equal(100);
      expect(status.tag).to.equal("b");
      expect(status.lastUpdate).to.equal(BigInt(await time.latest()));
    });

    it("rejects a response above 100", async () => {
      const { registry, validator } = await loadFixture(requestedFixture);
      await expect(registry.connect(validator).validationResponse(REQUEST, 101, "", ZeroHash, ""))
        .to.be.revertedWithCustomError(registry, "ResponseOutOfRange")
        .withArgs(101);
    });

    it("rejects an answer from anyone but the request's validator", async () => {
      const { registry, other } = await loadFixture(requestedFixture);
      await expect(registry.connect(other).validationResponse(REQUEST, 50, "", ZeroHash, ""))
        .to.be.revertedWithCustomError(registry, "RequestNotFound")
        .withArgs(REQUEST, other.address);
    });

    it("rejects an answer to an unknown request", async () => {
      const { registry, validator } = await loadFixture(fixture);
      await expect(registry.connect(validator).validationResponse(hashText("nope"), 50, "", ZeroHash, ""))
        .to.be.revertedWithCustomError(registry, "RequestNotFound")
        .withArgs(hashText("nope"), validator.address);
    });
  });

  describe("views", () => {
    it("return zeros for unknown requests", async () => {
      const { registry, validator } = await loadFixture(fixture);
      const status = await registry.getValidationStatusFor(REQUEST, validator.address);
      expect(status.validatorAddress).to.equal(ZeroAddress);
      expect(status.agentId).to.equal(0n);
      expect(status.tag).to.equal("");
      expect(status.lastUpdate).to.equal(0n);
      expect(await registry.verdictOf(REQUEST, validator.address)).to.deep.equal([false, 0n, ZeroHash, 0n]);
      expect(await registry.requestExists(REQUEST, validator.address)).to.equal(false);
      // An open, unanswered request also reads as no verdict.
      await registry.validationRequest(validator.address, AGENT, "", REQUEST);
      expect((await registry.verdictOf(REQUEST, validator.address)).responded).to.equal(false);
      expect(await registry.MAX_RESPONSE()).to.equal(100);
    });
  });
});
