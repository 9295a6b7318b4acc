/**
 * The verification service (facilitator/verify.ts): one test per
 * invalidReason, with real signatures, on x402 v1 and v2 envelopes.
 */
import { expect } from "chai";
import { Signature } from "ethers";
import type { SignedGuarantee } from "../../sdk/claims";
import { SECP256K1_N } from "../../sdk/eip712";
import { WireError } from "../../sdk/errors";
import { guaranteeId, validationRequestHash } from "../../sdk/ids";
import { type X402Version, extraFromDomain, extraFromPolicy } from "../../sdk/x402";
import { ManualClock } from "../../facilitator/clock";
import type { DeploymentParams } from "../../facilitator/deployment";
import { INVALID_REASONS, type InvalidReason } from "../../sdk/invalid-reasons";
import {
  SignatureCheckUnavailableError,
  type VerifyOutcome,
  parsePaymentRequest,
  verifyPayment,
  verifyPaymentWithContractWallets,
} from "../../facilitator/verify";
import { ContractWalletUnavailableError, type SigningKeyRead } from "../../facilitator/contract-wallets";
import {
  CHAIN_ID,
  ETH,
  NETWORK,
  T0,
  TOKEN,
  VAULT,
  bodyFor,
  payer,
  payloadFor,
  requirementsFor,
  seller,
  sign,
  stranger,
  testDeployment,
  testPolicy,
  v1Claims,
  v2Claims,
} from "./helpers";

const WINDOW = { pastSeconds: 600, futureSeconds: 30 };
const deployment = testDeployment();

function verifyBody(
  body: unknown,
  options: { deployment?: DeploymentParams; now?: number } = {},
): VerifyOutcome {
  return verifyPayment(parsePaymentRequest(body), {
    deployment: options.deployment ?? deployment,
    clock: new ManualClock(options.now ?? T0),
    timestampWindow: WINDOW,
  });
}

function expectValid(outcome: VerifyOutcome): void {
  expect(outcome, outcome.message ?? "").to.deep.equal({
    isValid: true,
    invalidReason: null,
    message: null,
    payer: payer.address,
  });
}

/** Every reason a test has produced: the suite checks at the end that none is left untested. */
const reasonsSeen = new Set<string>();

function expectInvalid(outcome: VerifyOutcome, reason: InvalidReason): void {
  reasonsSeen.add(reason);
  expect(outcome.isValid).to.equal(false);
  expect(outcome.invalidReason, outcome.message ?? "").to.equal(reason);
  expect(outcome.message).to.be.a("string").and.not.equal("");
  expect(INVALID_REASONS).to.include(reason);
}

/** The same signature in its high-s form (n − s, flipped v): valid ECDSA, refused as malleable. */
function highS(signature: string): string {
  const sig = Signature.from(signature);
  const s = SECP256K1_N - BigInt(sig.s);
  const v = sig.v === 27 ? 28 : 27;
  return sig.r + s.toString(16).padStart(64, "0") + v.toString(16);
}

const VERSIONS: X402Version[] = [1, 2];

describe("facilitator verifyPayment", function () {
  after(function () {
    expect([...reasonsSeen].sort()).to.deep.equal([...INVALID_REASONS].sort());
  });

  describe("a payer's registered signing key (a contract wallet's; the chain stubbed)", function () {
    /** Verifies with a chain whose Vault answers `read` (or fails) for every payer. */
    function verifyWithKeys(body: unknown, read: SigningKeyRead | Error, now = T0): Promise<VerifyOutcome> {
      return verifyPaymentWithContractWallets(parsePaymentRequest(body), {
        deployment,
        clock: new ManualClock(now),
        timestampWindow: WINDOW,
        contractWallets: {
          signingKey: async (chainId, vault, who) => {
            expect([chainId, vault, who]).to.deep.equal([CHAIN_ID, VAULT, payer.address]);
            if (read instanceof Error) throw read;
            return read;
          },
        },
      });
    }
    const key = (effectiveFrom: number, blockTimestamp = T0): SigningKeyRead => ({
      registered: { key: stranger.address, effectiveFrom },
      blockTimestamp,
    });

    it("accepts the registered key's signature; the payer's own needs no chain read", async function () {
      expectValid(await verifyWithKeys(bodyFor(await sign(v1Claims(), "eip712", stranger), 2), key(0)));
      expectValid(await verifyWithKeys(bodyFor(await sign(v1Claims()), 2), new Error("not asked")));
    });

    it("signing_key_change_pending: the latest key is not in effect at the block read", async function () {
      const signed = await sign(v1Claims(), "eip712", stranger);
      const outcome = await verifyWithKeys(bodyFor(signed, 2), key(T0 + 1));
      expectInvalid(outcome, "signing_key_change_pending");
      expect(outcome.message).to.include(`timestamped ${T0 + 1} or later`);
    });

    it("signer_mismatch: no key registered, another key, or a timestamp before the key took effect", async function () {
      const byStranger = bodyFor(await sign(v1Claims(), "eip712", stranger), 2);
      const none = await verifyWithKeys(byStranger, { registered: null, blockTimestamp: T0 });
      expectInvalid(none, "signer_mismatch");
      expect(none.message).to.match(/no guarantee signing key registered/);
      const other = await verifyWithKeys(bodyFor(await sign(v1Claims(), "eip712", seller), 2), key(0));
      expect(other.message).to.match(/nor its registered guarantee signing key/);
      const early = await verifyWithKeys(byStranger, key(T0 - 2)); // the claims are timestamped T0 - 5
      expectInvalid(early, "signer_mismatch");
      expect(early.message).to.match(/^claims\.timestamp: .* took effect/);
    });

    it("throws SignatureCheckUnavailableError when the chain cannot be asked", async function () {
      const signed = await sign(v1Claims(), "eip712", stranger);
      const failing = verifyWithKeys(bodyFor(signed, 2), new ContractWalletUnavailableError("node down"));
      await failing.then(
        () => expect.fail("expected a throw"),
        (error: unknown) => {
          expect(error).to.be.instanceOf(SignatureCheckUnavailableError);
          expect((error as Error).message).to.match(/node down/);
        },
      );
    });
  });

  describe("valid payments", function () {
    for (const x402Version of VERSIONS) {
      it(`accepts a V1 guarantee signed with eip712 (x402 v${x402Version})`, async function () {
        expectValid(verifyBody(bodyFor(await sign(v1Claims()), x402Version)));
      });

      it(`accepts a V1 guarantee signed with eip191 (x402 v${x402Version})`, async function () {
        expectValid(verifyBody(bodyFor(await sign(v1Claims(), "eip191"), x402Version)));
      });

      it(`accepts a V2 guarantee whose policy is the one in extra (x402 v${x402Version})`, async function () {
        expectValid(verifyBody(bodyFor(await sign(v2Claims()), x402Version)));
      });
    }

    it("accepts ETH (the zero address) as the asset", async function () {
      expectValid(verifyBody(bodyFor(await sign(v1Claims({ asset: ETH })), 2)));
    });

    it("compares addresses case-insensitively", async function () {
      const signed = await sign(v1Claims());
      const body = bodyFor(signed, 1, {
        payTo: seller.address.toLowerCase(),
        asset: TOKEN.toLowerCase(),
      });
      expectValid(verifyBody(body));
    });

    it("accepts timestamps exactly at both ends of the window", async function () {
      expectValid(verifyBody(bodyFor(await sign(v1Claims({ timestamp: T0 - 600 })), 2)));
      expectValid(verifyBody(bodyFor(await sign(v1Claims({ timestamp: T0 + 30 })), 2)));
    });

    it("accepts a V2 policy carrying the right chain id and validation request hash", async function () {
      const claims = v2Claims();
      const id = guaranteeId({ chainId: CHAIN_ID, vault: VAULT }, claims.user, claims.reqId);
      claims.policy.chainId = CHAIN_ID;
      claims.policy.requestHash = validationRequestHash(CHAIN_ID, claims.policy, id);
      expectValid(verifyBody(bodyFor(await sign(claims), 2)));
    });
  });

  describe("invalid payments, one reason each", function () {
    const DOMAIN = deployment.hasher.domain;
    for (const [what, domain] of [
      ["chain_id", { ...DOMAIN, chainId: 1n }],
      ["contract_address", { ...DOMAIN, verifyingContract: stranger.address }],
      ["eip712_name", { ...DOMAIN, name: "Other" }],
      ["eip712_version", { ...DOMAIN, version: "2" }],
    ] as const) {
      it(`domain_mismatch: extra names another ${what} than the deployment's (requirements, v2 accepted)`, async function () {
        const signed = await sign(v1Claims());
        const extra = extraFromDomain(domain);
        const outcome = verifyBody(bodyFor(signed, 1, { extra }));
        expectInvalid(outcome, "domain_mismatch");
        expect(outcome.message).to.match(new RegExp(`^paymentRequirements\\.extra\\.${what}: `));
        // v2: the requirements name the deployment's domain, the buyer's accepted copy another.
        const body = bodyFor(signed, 2, { extra: extraFromDomain(DOMAIN) });
        const accepted = { ...(body.paymentPayload as { accepted: object }).accepted, extra };
        const tampered = { ...body, paymentPayload: { ...(body.paymentPayload as object), accepted } };
        const v2 = verifyBody(tampered);
        expectInvalid(v2, "domain_mismatch");
        expect(v2.message).to.match(new RegExp(`^paymentPayload\\.accepted\\.extra\\.${what}: `));
      });
    }

    it("the deployment's own domain in extra, in any address case, passes (with a V2 policy beside it)", async function () {
      const signed = await sign(v2Claims());
      const extra = {
        ...extraFromPolicy(signed.claims.version === 2 ? signed.claims.policy : testPolicy()),
        ...extraFromDomain(DOMAIN),
        contract_address: VAULT.toLowerCase(),
      };
      expectValid(verifyBody(bodyFor(signed, 2, { extra })));
    });

    it("validation_deadline_too_far: the V2 deadline is after Core's latest_validation_deadline", async function () {
      const capped = testDeployment({ latest_validation_deadline: T0 + 100 });
      const atCap = await sign(v2Claims({}, testPolicy({ deadline: T0 + 100 })));
      expectValid(verifyBody(bodyFor(atCap, 2), { deployment: capped }));
      const beyond = await sign(v2Claims({}, testPolicy({ deadline: T0 + 101 })));
      const outcome = verifyBody(bodyFor(beyond, 1), { deployment: capped });
      expectInvalid(outcome, "validation_deadline_too_far");
      expect(outcome.message).to.include("latest accepted: " + (T0 + 100));
      // V1 guarantees have no deadline; no cap (null) accepts any future deadline.
      expectValid(verifyBody(bodyFor(await sign(v1Claims()), 2), { deployment: capped }));
      expectValid(verifyBody(bodyFor(beyond, 2)));
    });

    it("unsupported_scheme: requirements in another scheme", async function () {
      expectInvalid(
        verifyBody(bodyFor(await sign(v1Claims()), 1, { scheme: "exact" })),
        "unsupported_scheme",
      );
    });

    it("unsupported_scheme: a v1 payload in another scheme", async function () {
      const signed = await sign(v1Claims());
      const body = bodyFor(signed, 1);
      (body.paymentPayload as Record<string, unknown>).scheme = "exact";
      expectInvalid(verifyBody(body), "unsupported_scheme");
    });

    it("unsupported_network: requirements on another chain", async function () {
      const signed = await sign(v1Claims());
      const body = bodyFor(signed, 2, { network: "eip155:1" });
      expectInvalid(verifyBody(body), "unsupported_network");
    });

    it("network_mismatch: a v1 payload on another chain than the requirements", async function () {
      const body = bodyFor(await sign(v1Claims()), 1);
      (body.paymentPayload as Record<string, unknown>).network = "eip155:1";
      expectInvalid(verifyBody(body), "network_mismatch");
    });

    for (const [field, value] of [
      ["payTo", stranger.address],
      ["asset", ETH],
      ["amount", "999"],
      ["extra", null],
    ] as const) {
      it(`accepted_mismatch: v2 accepted.${field} differs from the requirements`, async function () {
        const signed = await sign(v2Claims());
        const requirements = requirementsFor(signed.claims, 2);
        const body = {
          paymentPayload: payloadFor(signed, 2, { ...requirements, [field]: value }),
          paymentRequirements: requirements,
        };
        const outcome = verifyBody(body);
        expectInvalid(outcome, "accepted_mismatch");
        expect(outcome.message).to.contain(`accepted.${field}`);
      });
    }

    for (const x402Version of VERSIONS) {
      it(`recipient_mismatch: payTo is not claims.recipient_address (x402 v${x402Version})`, async function () {
        const signed = await sign(v1Claims());
        expectInvalid(
          verifyBody(bodyFor(signed, x402Version, { payTo: stranger.address })),
          "recipient_mismatch",
        );
      });

      it(`asset_mismatch: asset is not claims.asset_address (x402 v${x402Version})`, async function () {
        expectInvalid(
          verifyBody(bodyFor(await sign(v1Claims()), x402Version, { asset: ETH })),
          "asset_mismatch",
        );
      });

      it(`amount_mismatch: the required amount differs, lower or higher (x402 v${x402Version})`, async function () {
        const signed = await sign(v1Claims({ amount: 1000n }));
        const field = x402Version === 1 ? "maxAmountRequired" : "amount";
        expectInvalid(verifyBody(bodyFor(signed, x402Version, { [field]: "1001" })), "amount_mismatch");
        expectInvalid(verifyBody(bodyFor(signed, x402Version, { [field]: "999" })), "amount_mismatch");
      });
    }

    it("unsupported_version: Core does not accept V2", async function () {
      const onlyV1 = testDeployment({ accepted_guarantee_versions: [1], max_accepted_guarantee_version: 1 });
      const signed = await sign(v2Claims(), "eip712", payer, onlyV1);
      expectInvalid(verifyBody(bodyFor(signed, 2), { deployment: onlyV1 }), "unsupported_version");
    });

    it("timestamp_too_old: more than 600 s old", async function () {
      const signed = await sign(v1Claims({ timestamp: T0 - 601 }));
      expectInvalid(verifyBody(bodyFor(signed, 2)), "timestamp_too_old");
    });

    it("timestamp_in_future: more than 30 s ahead", async function () {
      const signed = await sign(v1Claims({ timestamp: T0 + 31 }));
      expectInvalid(verifyBody(bodyFor(signed, 2)), "timestamp_in_future");
    });

    it("the window follows the injected clock", async function () {
      const body = bodyFor(await sign(v1Claims({ timestamp: T0 })), 2);
      expectValid(verifyBody(body, { now: T0 + 600 }));
      expectInvalid(verifyBody(body, { now: T0 + 601 }), "timestamp_too_old");
      expectInvalid(verifyBody(body, { now: T0 - 31 }), "timestamp_in_future");
    });

    it("policy_required: the requirements ask for a policy, the claims are V1", async function () {
      const signed = await sign(v1Claims());
      const body = bodyFor(signed, 2, { extra: extraFromPolicy(testPolicy()) });
      expectInvalid(verifyBody(body), "policy_required");
    });

    it("policy_mismatch: the claims' policy differs from the one in extra", async function () {
      const signed = await sign(v2Claims());
      for (const change of [
        { minScore: 79 },
        { validator: stranger.address },
        { agentId: 8n },
        { jobHash: "0x" + "cd".repeat(32) },
        { tag: "speed" },
        { deadline: T0 + 3601 },
      ]) {
        const body = bodyFor(signed, 1, { extra: extraFromPolicy(testPolicy(change), { other: "kept" }) });
        expectInvalid(verifyBody(body), "policy_mismatch");
      }
    });

    it("policy_mismatch: a V2 guarantee where the requirements ask for no policy", async function () {
      const signed = await sign(v2Claims());
      expectInvalid(verifyBody(bodyFor(signed, 1, { extra: null })), "policy_mismatch");
      expectInvalid(verifyBody(bodyFor(signed, 1, { extra: { unrelated: true } })), "policy_mismatch");
    });

    it("policy_expired: the validation deadline is now or past", async function () {
      const signed = await sign(v2Claims({}, testPolicy({ deadline: T0 })));
      expectInvalid(verifyBody(bodyFor(signed, 2)), "policy_expired");
    });

    it("untrusted_registry: the policy's registry is not trusted by Core", async function () {
      const signed = await sign(v2Claims({}, testPolicy({ registry: stranger.address })));
      expectInvalid(verifyBody(bodyFor(signed, 2)), "untrusted_registry");
    });

    it("policy_chain_mismatch: validation_chain_id is another chain (claims or extra)", async function () {
      const signed = await sign(v2Claims({}, testPolicy({ chainId: 1 })));
      expectInvalid(verifyBody(bodyFor(signed, 2)), "policy_chain_mismatch");

      const plain = await sign(v2Claims());
      const extra = extraFromPolicy(testPolicy({ chainId: 1 }));
      expectInvalid(verifyBody(bodyFor(plain, 1, { extra })), "policy_chain_mismatch");
    });

    it("policy_request_hash_mismatch: validation_request_hash is not this guarantee's", async function () {
      const signed = await sign(v2Claims({}, testPolicy({ requestHash: "0x" + "01".repeat(32) })));
      expectInvalid(verifyBody(bodyFor(signed, 2)), "policy_request_hash_mismatch");
    });

    it("invalid_signature: the high-s twin of a valid signature", async function () {
      const signed = await sign(v1Claims());
      const malleable: SignedGuarantee = { ...signed, signature: highS(signed.signature) };
      const outcome = verifyBody(bodyFor(malleable, 2));
      expectInvalid(outcome, "invalid_signature");
      expect(outcome.message).to.contain("high-s");
    });

    it("invalid_signature: a v byte that is not 27/28/0/1", async function () {
      const signed = await sign(v1Claims());
      const bad: SignedGuarantee = { ...signed, signature: signed.signature.slice(0, -2) + "1d" };
      expectInvalid(verifyBody(bodyFor(bad, 1)), "invalid_signature");
    });

    it("signer_mismatch: signed by someone else", async function () {
      const signed = await sign(v1Claims(), "eip712", stranger);
      const outcome = verifyBody(bodyFor(signed, 2));
      expectInvalid(outcome, "signer_mismatch");
      expect(outcome.payer).to.equal(payer.address);
    });

    it("signer_mismatch: claims changed after signing (eip712 and eip191)", async function () {
      for (const scheme of ["eip712", "eip191"] as const) {
        const signed = await sign(v1Claims(), scheme);
        const tampered: SignedGuarantee = { ...signed, claims: { ...signed.claims, amount: 2n } };
        expectInvalid(verifyBody(bodyFor(tampered, 1)), "signer_mismatch");
      }
    });

    it("signer_mismatch: an eip712 signature presented as eip191", async function () {
      const signed = await sign(v1Claims(), "eip712");
      expectInvalid(verifyBody(bodyFor({ ...signed, scheme: "eip191" }, 2)), "signer_mismatch");
    });

    it("signer_mismatch: a signature for another Vault's domain", async function () {
      const other = testDeployment({ contract_address: stranger.address });
      const signed = await sign(v1Claims(), "eip712", payer, other);
      expectInvalid(verifyBody(bodyFor(signed, 2)), "signer_mismatch");
    });
  });

  describe("parsePaymentRequest", function () {
    function parseError(body: unknown): WireError {
      try {
        parsePaymentRequest(body);
      } catch (error) {
        expect(error).to.be.instanceOf(WireError);
        return error as WireError;
      }
      throw new Error("expected a WireError");
    }

    it("resolves the x402 version from the payload when the body has none", async function () {
      const body = bodyFor(await sign(v1Claims()), 2);
      delete body.x402Version;
      expect(parsePaymentRequest(body).x402Version).to.equal(2);
    });

    it("refuses a body version that contradicts the payload's", async function () {
      const body = { ...bodyFor(await sign(v1Claims()), 1), x402Version: 2 };
      expect(parseError(body).field).to.equal("x402Version");
    });

    it("requires an amount in the requirements", async function () {
      const body = bodyFor(await sign(v1Claims()), 1);
      delete (body.paymentRequirements as Record<string, unknown>).maxAmountRequired;
      expect(parseError(body).field).to.equal("paymentRequirements.amount");
    });

    it("names the malformed field", async function () {
      const body = bodyFor(await sign(v1Claims()), 2);
      const claims = (body.paymentPayload as { payload: { claims: Record<string, unknown> } }).payload.claims;
      claims.amount = "-1";
      expect(parseError(body).field).to.equal("paymentPayload.payload.claims.amount");
      const fresh = bodyFor(await sign(v1Claims()), 2);
      const requirements = { ...(fresh.paymentRequirements as object), scheme: undefined, network: NETWORK };
      expect(parseError({ ...fresh, paymentRequirements: requirements }).field).to.equal(
        "paymentRequirements.scheme",
      );
      expect(parseError([]).field).to.equal("body");
    });
  });
});
