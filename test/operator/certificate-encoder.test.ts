import { expect } from "chai";
import { encodeCertificateClaims } from "../../sdk/certificate";
import type { GuaranteeClaims } from "../../sdk/claims";
import { certificateDomain, guaranteeId } from "../../sdk/ids";
import { MAX_UINT256, MAX_UINT64 } from "../../sdk/wire";
import { CertificateEncoder } from "../../operator/guarantees/certificate-encoder";
import { TETH, v1Claims, v2Claims } from "./guarantee-fixtures";

describe("CertificateEncoder (issuance fast path) equals the sdk encoding", () => {
  const deployments = [
    { chainId: 31337, vault: "0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512" },
    { chainId: 2n ** 64n + 1n, vault: "0x000000000000000000000000000000000000dEaD" },
  ];
  const cases: GuaranteeClaims[] = [
    v1Claims(),
    v1Claims({ reqId: 0n, amount: 1n, asset: TETH, timestamp: 0 }),
    v1Claims({ reqId: MAX_UINT256, amount: MAX_UINT256, timestamp: Number.MAX_SAFE_INTEGER }),
    v2Claims(),
    v2Claims({}, { tag: "", agentId: 0n, minScore: 0, deadline: Number(MAX_UINT64 >> 12n) }),
    v2Claims({}, { tag: "x".repeat(32), agentId: MAX_UINT256, minScore: 100 }),
    v2Claims({}, { tag: "ünïcødé ✓ — a tag longer than one word, " + "y".repeat(200) }),
  ];
  for (const deployment of deployments) {
    const encoder = new CertificateEncoder(deployment);
    it(`chain ${deployment.chainId}: domain, ids and claims bytes`, () => {
      expect(encoder.domain).to.equal(certificateDomain(deployment).toLowerCase());
      for (const claims of cases) {
        const id = guaranteeId(deployment, claims.user, claims.reqId).toLowerCase();
        expect(encoder.guaranteeId(claims.user, claims.reqId)).to.equal(id);
        expect("0x" + encoder.encode(claims, id).toString("hex")).to.equal(
          encodeCertificateClaims(claims, deployment).toLowerCase(),
        );
      }
    });
  }
});
