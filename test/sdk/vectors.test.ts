import { readFileSync } from "node:fs";
import { expect } from "chai";
import { getBytes } from "ethers";
import {
  decodeCertificateClaims,
  parseClaims,
  publicKeyFromArray,
  recoverGuaranteeSigner,
  verifyCertificateSignature,
} from "../../sdk";
import { VECTORS_PATH, type VectorFile, buildVectors } from "../../scripts/vectors";

const committed = JSON.parse(readFileSync(VECTORS_PATH, "utf8")) as VectorFile;
const domain = {
  name: committed.deployment.eip712Name,
  version: committed.deployment.eip712Version,
  chainId: committed.deployment.chainId,
  verifyingContract: committed.deployment.vault,
};

describe("shared test vectors (TypeScript side)", () => {
  it("are exactly what the sdk produces today (run `npm run vectors` after a deliberate change)", async () => {
    expect(JSON.parse(JSON.stringify(await buildVectors()))).to.deep.equal(committed);
  });

  for (const vector of committed.guarantees) {
    describe(vector.name, () => {
      const claims = parseClaims(vector.claims);

      it("signatures recover to the payer under both schemes", () => {
        for (const { scheme, signature } of vector.signatures) {
          expect(recoverGuaranteeSigner(domain, claims, signature, scheme)).to.equal(vector.signer);
        }
      });

      it("certificate decodes to the claims, id and domain", () => {
        const decoded = decodeCertificateClaims(vector.certificate.claims);
        expect(decoded.claims).to.deep.equal(claims);
        expect(decoded.guaranteeId).to.equal(vector.guarantee_id);
        expect(decoded.domain).to.equal(committed.deployment.certificate_domain);
      });

      it("certificate carries Core's BLS signature, and a flipped bit breaks it", () => {
        const publicKey = publicKeyFromArray(committed.bls.public_key);
        expect(verifyCertificateSignature(publicKey, vector.certificate)).to.equal(true);
        const claimsBytes = getBytes(vector.certificate.claims);
        claimsBytes[claimsBytes.length - 1] ^= 1;
        const tampered = { ...vector.certificate, claims: "0x" + Buffer.from(claimsBytes).toString("hex") };
        expect(verifyCertificateSignature(publicKey, tampered)).to.equal(false);
      });
    });
  }
});
