/**
 * docs/ is what integrators in other languages build signatures, ids and requests from, so every
 * hex value protocol.md's worked examples quote is recomputed here from the sdk and the shared
 * vectors, and the SIWE and x402 examples of operator-auth.md and x402-integration.md are parsed by
 * the code that reads them: a wire-format change that leaves a page stale fails this test.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { expect } from "chai";
import { TypedDataEncoder, Wallet, getBytes, hashMessage, hexlify, id, keccak256, toUtf8Bytes } from "ethers";
import { bls12_381 } from "@noble/curves/bls12-381.js";
import {
  CERTIFICATE_DOMAIN_TAG,
  CERTIFICATE_DST,
  GUARANTEE_ID_TAG,
  GUARANTEE_V1_TYPE,
  GUARANTEE_V1_TYPEHASH_HEX,
  GUARANTEE_V2_TYPE,
  GUARANTEE_V2_TYPEHASH_HEX,
  GuaranteeHasher,
  VALIDATION_REQUEST_TAG,
  certificateDomain,
  guaranteeId,
  parseClaims,
  parsePaymentPayload,
  parsePaymentRequired,
  recoverGuaranteeSigner,
  validationRequestHash,
  blsKeyFromSecret,
  type GuaranteeClaimsV2,
} from "../../sdk";
import { SiweMessage } from "siwe";
import { VECTORS_PATH, type VectorFile } from "../../scripts/vectors";

const page = readFileSync(path.join(__dirname, "..", "..", "docs", "protocol.md"), "utf8");
const vectors = JSON.parse(readFileSync(VECTORS_PATH, "utf8")) as VectorFile;
const deployment = { chainId: vectors.deployment.chainId, vault: vectors.deployment.vault };
const hasher = new GuaranteeHasher({
  name: vectors.deployment.eip712Name,
  version: vectors.deployment.eip712Version,
  chainId: vectors.deployment.chainId,
  verifyingContract: vectors.deployment.vault,
});

function vector(name: string): VectorFile["guarantees"][number] {
  const found = vectors.guarantees.find((entry) => entry.name === name);
  if (found === undefined) throw new Error(`no vector ${name}`);
  return found;
}

function expectOnPage(value: string, what: string): void {
  expect(page.includes(value), `docs/protocol.md should quote ${what}: ${value}`).to.equal(true);
}

describe("docs/protocol.md worked examples", () => {
  it("quote the EIP-712 type strings, type hashes and domain separator the sdk uses", () => {
    expectOnPage(GUARANTEE_V1_TYPE, "the GuaranteeV1 type");
    expectOnPage(GUARANTEE_V2_TYPE, "the GuaranteeV2 type");
    expectOnPage(GUARANTEE_V1_TYPEHASH_HEX, "the GuaranteeV1 type hash");
    expectOnPage(GUARANTEE_V2_TYPEHASH_HEX, "the GuaranteeV2 type hash");
    const domainType = "EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)";
    expectOnPage(domainType, "the domain type");
    expectOnPage(keccak256(toUtf8Bytes(domainType)), "the domain type hash");
    expectOnPage(hasher.domainSeparator, "the vectors' domain separator");
    expect(hasher.domainSeparator).to.equal(TypedDataEncoder.hashDomain(hasher.domain));
  });

  it("quote the v1-eth struct hash, digest, EIP-191 hash and both signatures", () => {
    const v1 = vector("v1-eth");
    const claims = parseClaims(v1.claims);
    expectOnPage("0x" + Buffer.from(hasher.structHash(claims)).toString("hex"), "the struct hash");
    expectOnPage(hasher.digest(claims), "the digest");
    expect(hasher.digest(claims)).to.equal(v1.typed_data_digest);
    expectOnPage(hashMessage(getBytes(hasher.digest(claims))), "the EIP-191 hash");
    for (const { signature } of v1.signatures) expectOnPage(signature, "a vector signature");
    expectOnPage(vector("v2-validation-unicode-tag").typed_data_digest, "the V2 digest");
  });

  it("quote the id tags, certificate domain, a guarantee id and a request hash", () => {
    expectOnPage(GUARANTEE_ID_TAG, "SURETY_GUARANTEE_ID_V1 hashed");
    expectOnPage(CERTIFICATE_DOMAIN_TAG, "SURETY_CERTIFICATE_V1 hashed");
    expectOnPage(VALIDATION_REQUEST_TAG, "SURETY_VALIDATION_REQUEST_V1 hashed");
    expectOnPage(certificateDomain(deployment), "the certificate domain");
    const v1 = vector("v1-eth");
    expectOnPage(guaranteeId(deployment, parseClaims(v1.claims).user, BigInt(v1.claims.req_id)), "an id");
    const v2 = vector("v2-validation-unicode-tag");
    const v2Claims = parseClaims(v2.claims) as GuaranteeClaimsV2;
    expectOnPage(v2.guarantee_id, "the V2 guarantee id");
    const requestHash = validationRequestHash(deployment.chainId, v2Claims.policy, v2.guarantee_id);
    expectOnPage(requestHash, "the V2 request hash");
    expectOnPage(Buffer.from(v2Claims.policy.tag, "utf8").toString("hex"), "the tag's UTF-8 bytes");
  });

  it("quote the certificate tag, the v1-eth claims word by word and its signature", () => {
    expectOnPage(CERTIFICATE_DST, "the hash-to-curve tag");
    const { certificate } = vector("v1-eth");
    const words = certificate.claims.slice(2).match(/.{64}/g) ?? [];
    expect(words.length * 32).to.equal((certificate.claims.length - 2) / 2);
    for (const word of words) expectOnPage(word, "a claims word");
    expectOnPage(certificate.signature, "the certificate signature");
  });
});

describe("docs/protocol.md key material and the V2 vector", () => {
  it("quote the vectors' BLS IKM, its KeyGen secret and public key, and the payers' keys with their derivation", () => {
    expectOnPage("surety test vectors: operator BLS key", "the IKM's text");
    expect(id("surety test vectors: operator BLS key")).to.equal(vectors.bls.ikm);
    expectOnPage(vectors.bls.ikm, "the vectors' IKM");
    const key = blsKeyFromSecret(vectors.bls.ikm);
    expect(hexlify(key.secretKey)).to.equal(vectors.bls.secret_key);
    expectOnPage(vectors.bls.secret_key, "the vectors' BLS secret key");
    expect(Array.from(key.publicKey)).to.deep.equal(vectors.bls.public_key);
    expectOnPage(hexlify(key.publicKey), "the vectors' BLS public key");
    for (const [n, used] of [
      [1, "v1-eth"],
      [2, "v1-token-extremes"],
    ] as const) {
      const secret = id(`surety test vectors: payer ${n}`);
      expectOnPage(`surety test vectors: payer ${n}`, "a payer key's text");
      expectOnPage(secret, `payer ${n}'s key`);
      expectOnPage(new Wallet(secret).address, `payer ${n}'s address`);
      expect(vector(used).signer).to.equal(new Wallet(secret).address);
    }
  });

  it("give the V2 vector's claims as JSON, with both its signatures", () => {
    const v2 = vector("v2-validation-unicode-tag");
    expect(jsonBlockAfter(page, "The whole V2 vector's claims as they travel")).to.deep.equal(v2.claims);
    for (const { signature } of v2.signatures) expectOnPage(signature, "a V2 vector signature");
  });

  it("the recipe from curve primitives verifies v1-eth with the vectors' key, and refuses a changed byte", () => {
    const dst = "BLS_SIG_BLS12381G1_XMD:SHA-256_SSWU_RO_POP_";
    expect(dst).to.equal(CERTIFICATE_DST);
    expectOnPage(`the 43 ASCII bytes \`${dst}\``, "the tag with its length");
    expect(dst.length).to.equal(43);
    const { G1, G2 } = bls12_381;
    const { certificate } = vector("v1-eth");
    const recipe = (claims: Uint8Array): boolean => {
      // 2. hash_to_curve onto G1 (RFC 9380 BLS12381G1_XMD:SHA-256_SSWU_RO_) with the tag.
      const h = G1.hashToCurve(claims, { DST: dst });
      // 3–5. decompress the signature (G1) and the key (G2); on curve, in the subgroup, not infinity.
      const signature = G1.Point.fromBytes(getBytes(certificate.signature));
      const publicKey = G2.Point.fromBytes(Uint8Array.from(vectors.bls.public_key));
      for (const point of [signature, publicKey]) {
        point.assertValidity();
        expect(point.is0()).to.equal(false);
      }
      // 6. e(signature, −g2) · e(H, public_key) = 1 in GT.
      const gt = bls12_381.pairingBatch([
        { g1: signature, g2: G2.Point.BASE.negate() },
        { g1: G1.Point.fromAffine(h.toAffine()), g2: publicKey },
      ]);
      return bls12_381.fields.Fp12.eql(gt, bls12_381.fields.Fp12.ONE);
    };
    const claims = getBytes(certificate.claims);
    expect(recipe(claims)).to.equal(true);
    const changed = Uint8Array.from(claims);
    changed[changed.length - 1] ^= 1;
    expect(recipe(changed)).to.equal(false);
    expectOnPage("0xd201000000010001", "the G1 effective cofactor");
    expectOnPage("0x" + bls12_381.fields.Fr.ORDER.toString(16), "the group order r");
  });
});

/** The JSON blocks of a markdown page that follow `marker` (the first ```json fence after it). */
function jsonBlockAfter(markdown: string, marker: string, skip = 0): unknown {
  let from = markdown.indexOf(marker);
  expect(from, `marker ${marker}`).to.be.greaterThan(-1);
  for (let i = 0; i <= skip; i++) from = markdown.indexOf("```json\n", from) + "```json\n".length;
  return JSON.parse(markdown.slice(from, markdown.indexOf("```", from)));
}

describe("docs/operator-auth.md SIWE example", () => {
  it("is byte for byte the canonical EIP-4361 text Core requires", () => {
    const auth = readFileSync(path.join(__dirname, "..", "..", "docs", "operator-auth.md"), "utf8");
    const message = new SiweMessage({
      domain: "127.0.0.1:8080",
      uri: "http://127.0.0.1:8080",
      chainId: 31337,
      statement: "Sign in to Surety Core.",
      address: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
      version: "1",
      nonce: "3f9c0b1e6a2d4c8e9f7a1b2c3d4e5f60",
      issuedAt: "2025-06-15T15:06:40.000Z",
      expirationTime: "2025-06-15T15:11:40.000Z",
    }).prepareMessage();
    expect(auth).to.include("```\n" + message + "\n```");
    expect(auth).to.include("`" + JSON.stringify(message) + "`");
  });
});

describe("docs/x402-integration.md v2 envelopes", () => {
  const x402 = readFileSync(path.join(__dirname, "..", "..", "docs", "x402-integration.md"), "utf8");
  const marker = "### x402 v2 envelopes in full";

  it("the 402 answer parses as a v2 PaymentRequired with a resource object", () => {
    const answer = parsePaymentRequired(jsonBlockAfter(x402, marker));
    expect(answer.x402Version).to.equal(2);
    expect(answer.resource?.url).to.equal("http://127.0.0.1:4021/weather");
  });

  it("the payment parses, and with the vector's full signature verifies as v1-eth", () => {
    const wire = jsonBlockAfter(x402, marker, 1) as { payload: { signature: string } };
    const v1 = vector("v1-eth");
    wire.payload.signature = v1.signatures[0].signature;
    const payload = parsePaymentPayload(wire);
    expect(payload.x402Version).to.equal(2);
    expect(payload.payload.claims).to.deep.equal(parseClaims(v1.claims));
    expect(
      recoverGuaranteeSigner(hasher, payload.payload.claims, v1.signatures[0].signature, "eip712"),
    ).to.equal(v1.signer);
  });
});
