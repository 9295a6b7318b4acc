import { readFileSync } from "node:fs";
import { expect } from "chai";
import { ethers } from "hardhat";
import { loadFixture } from "@nomicfoundation/hardhat-network-helpers";
import { CERTIFICATE_DST, parseClaims, remunerateCallArgs, toRemunerateArgs } from "../../sdk";
import { Vault__factory } from "../../typechain-types";
import type { VectorFile } from "../../scripts/vectors";

// The Solidity codec and BLS verifier checked against the very vectors the
// TypeScript sdk is checked against (test/sdk/vectors.test.ts).
const vectors = JSON.parse(readFileSync("test/vectors/sdk-vectors.json", "utf8")) as VectorFile;
const { chainId, vault } = vectors.deployment;
const DST = ethers.toUtf8Bytes(CERTIFICATE_DST);

async function deployHarnesses() {
  const codec = await ethers.deployContract("CertificateCodecHarness");
  const verifier = await ethers.deployContract("BLSVerifierHarness");
  return { codec, verifier };
}

function flipLastBit(hex: string): string {
  const bytes = ethers.getBytes(hex);
  bytes[bytes.length - 1] ^= 1;
  return ethers.hexlify(bytes);
}

describe("shared test vectors (Solidity side)", () => {
  it("certificate domain", async () => {
    const { codec } = await loadFixture(deployHarnesses);
    expect(await codec.certificateDomain(chainId, vault)).to.equal(vectors.deployment.certificate_domain);
  });

  for (const vector of vectors.guarantees) {
    describe(vector.name, () => {
      const claims = parseClaims(vector.claims);

      it("CertificateCodec decodes the certificate claims field for field", async () => {
        const { codec } = await loadFixture(deployHarnesses);
        const decoded = await codec.decodeClaims(vector.certificate.claims);
        expect(decoded.version).to.equal(BigInt(claims.version));
        expect(decoded.domain).to.equal(vectors.deployment.certificate_domain);
        expect(decoded.guaranteeId).to.equal(vector.guarantee_id);
        expect(decoded.user).to.equal(claims.user);
        expect(decoded.recipient).to.equal(claims.recipient);
        expect(decoded.reqId).to.equal(claims.reqId);
        expect(decoded.amount).to.equal(claims.amount);
        expect(decoded.asset).to.equal(claims.asset);
        expect(decoded.timestamp).to.equal(BigInt(claims.timestamp));
        expect(await codec.guaranteeId(chainId, vault, claims.user, claims.reqId)).to.equal(
          vector.guarantee_id,
        );
        if (claims.version === 2) {
          const policy = await codec.decodePolicy(decoded.policy);
          expect([policy.registry, policy.validator, policy.agentId, policy.minScore]).to.deep.equal([
            claims.policy.registry,
            claims.policy.validator,
            claims.policy.agentId,
            BigInt(claims.policy.minScore),
          ]);
          expect([policy.jobHash, policy.tag, policy.deadline]).to.deep.equal([
            claims.policy.jobHash,
            claims.policy.tag,
            BigInt(claims.policy.deadline),
          ]);
          // The sdk's parsed policy has the struct's field names (ethers' Result cannot be passed back).
          expect(await codec.validationRequestHash(chainId, claims.policy, vector.guarantee_id)).to.equal(
            vector.validation_request_hash,
          );
        } else {
          expect(decoded.policy).to.equal("0x");
        }
      });

      it("BLSVerifier accepts Core's signature and rejects a flipped bit in claims or signature, a wrong key or a wrong tag", async () => {
        const { verifier } = await loadFixture(deployHarnesses);
        const publicKey = vectors.bls.public_key_eip2537;
        const { claims: message, signature } = toRemunerateArgs(vector.certificate, vector.signatures[0]);
        expect(await verifier.verify(publicKey, message, signature, DST)).to.equal(true);
        expect(await verifier.verify(publicKey, flipLastBit(message), signature, DST)).to.equal(false);
        const tamperedSignature = { ...signature, y_b: flipLastBit(signature.y_b) };
        expect(await verifier.verify(publicKey, message, tamperedSignature, DST)).to.equal(false);
        const otherKey = { ...publicKey, x_c0_b: flipLastBit(publicKey.x_c0_b) };
        expect(await verifier.verify(otherKey, message, signature, DST)).to.equal(false);
        const nulTag = ethers.toUtf8Bytes("BLS_SIG_BLS12381G1_XMD:SHA-256_SSWU_RO_NUL_");
        expect(await verifier.verify(publicKey, message, signature, nulTag)).to.equal(false);
      });
    });
  }

  it("docs/protocol.md's worked remunerate example is the encoder's call data for the V2 vector", () => {
    const vector = vectors.guarantees.find((g) => g.name === "v2-validation-unicode-tag")!;
    const args = remunerateCallArgs(toRemunerateArgs(vector.certificate, vector.signatures[0]));
    const data = Vault__factory.createInterface().encodeFunctionData("remunerate", args);
    const doc = readFileSync("docs/protocol.md", "utf8");
    const block = doc.slice(
      doc.indexOf("<!-- remunerate-example:start -->"),
      doc.indexOf("<!-- remunerate-example:end -->"),
    );
    const words = [...block.matchAll(/^([0-9a-f]{4}) ([0-9a-f]{64})/gm)];
    words.forEach(([, offset], i) => expect(parseInt(offset, 16)).to.equal(i * 32));
    expect(data).to.equal("0x35caf333" + words.map(([, , word]) => word).join(""));
    // registerReserve takes the same arguments; the documented selector is its own.
    const reserve = Vault__factory.createInterface().getFunction("registerReserve")!.selector;
    expect(doc).to.include(`(selector \`${reserve}\`)`);
  });
});
