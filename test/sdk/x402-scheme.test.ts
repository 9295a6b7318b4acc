/**
 * The `svc-credit` scheme objects on their own (no HTTP): what the server
 * scheme builds from route prices and facilitator kinds, what the client
 * scheme signs or refuses, and the `extra` wire helpers they share.
 * End to end with the official packages: test/e2e/x402-official.test.ts.
 */
import { expect } from "chai";
import { Wallet } from "ethers";
import type { Network, PaymentRequirements } from "@x402/core/types";
import { parseSignedGuarantee } from "../../sdk/claims";
import { guaranteeHasher, verifyGuaranteeSignature } from "../../sdk/eip712";
import { WireError } from "../../sdk/errors";
import {
  DOMAIN_EXTRA_FIELDS,
  domainFromExtra,
  extraFromDomain,
  parseSettleResult,
  settlementExtra,
} from "../../sdk/x402";
import {
  MemoryPaymentLedger,
  PAYMENT_ALREADY_USED,
  PAYMENT_IN_PROGRESS,
  PaymentError,
  SCHEME,
  SuretyClientScheme,
  SuretyServerScheme,
  certificateOfSettlement,
  moneyToBaseUnits,
  suretyPrice,
} from "../../sdk/kits/x402-scheme";

const NETWORK = "eip155:31337" as Network;
const VAULT = "0x5FbDB2315678afecb367f032d93F642f64180aa3";
const TOKEN = "0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512";
const REGISTRY = "0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0";
const VALIDATOR = "0xCf7Ed3AccA5a467e9e704C703E8D87F634fB0Fc9";
const SELLER = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC";
const DOMAIN = { name: "Surety", version: "1", chainId: 31337, verifyingContract: VAULT };
const DOMAIN_EXTRA = {
  contract_address: VAULT,
  chain_id: 31337,
  eip712_name: "Surety",
  eip712_version: "1",
};
const NOW = 1_750_000_000;
const payer = new Wallet("0x" + "61".repeat(32));
const certificate = { claims: "0x" + "ab".repeat(40), signature: "0x" + "cd".repeat(48) };

function policy(deadline = NOW + 3600) {
  return {
    validation_registry_address: REGISTRY,
    validator_address: VALIDATOR,
    validator_agent_id: "7",
    min_validation_score: 80,
    job_hash: "0x" + "cd".repeat(32),
    required_validation_tag: "quality",
    validation_deadline: deadline,
  };
}

function kind(extra: Record<string, unknown> | null = DOMAIN_EXTRA) {
  return { x402Version: 2, scheme: SCHEME, network: NETWORK, ...(extra === null ? {} : { extra }) };
}

function requirements(overrides: Partial<PaymentRequirements> = {}): PaymentRequirements {
  return {
    scheme: SCHEME,
    network: NETWORK,
    asset: TOKEN,
    amount: "1000",
    payTo: SELLER,
    maxTimeoutSeconds: 60,
    extra: { ...DOMAIN_EXTRA },
    ...overrides,
  };
}

async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected a rejection");
}

describe("x402 svc-credit scheme (sdk/kits/x402-scheme)", function () {
  describe("signing domain in extra", function () {
    it("round-trips under the public-params names", function () {
      expect(extraFromDomain(DOMAIN)).to.deep.equal(DOMAIN_EXTRA);
      expect(Object.keys(DOMAIN_EXTRA)).to.have.members([...DOMAIN_EXTRA_FIELDS]);
      const parsed = domainFromExtra({ ...DOMAIN_EXTRA, other: 1 });
      expect(parsed).to.deep.equal({
        name: "Surety",
        version: "1",
        chainId: 31337n,
        verifyingContract: VAULT,
      });
      expect(domainFromExtra({ paymentFlow: "upfront" })).to.equal(null);
      expect(domainFromExtra(null)).to.equal(null);
    });

    it("names the field of a partial or malformed domain", function () {
      expect(() => domainFromExtra({ contract_address: VAULT })).to.throw(WireError, "extra.chain_id");
      expect(() => domainFromExtra({ ...DOMAIN_EXTRA, chain_id: 0 })).to.throw(WireError, "chain_id");
      expect(() => domainFromExtra({ ...DOMAIN_EXTRA, contract_address: "0x12" })).to.throw(
        WireError,
        "contract_address",
      );
      expect(() => domainFromExtra({ ...DOMAIN_EXTRA, eip712_name: "" })).to.throw(WireError, "eip712_name");
    });
  });

  describe("settlement certificate in extra", function () {
    it("is read from extra when the reference client dropped the top-level field", function () {
      const relayed = {
        success: true,
        transaction: "0x01",
        network: NETWORK,
        extra: settlementExtra(certificate),
      };
      expect(parseSettleResult(relayed)).to.deep.equal({
        success: true,
        error: null,
        txHash: null,
        networkId: NETWORK,
        certificate,
      });
      expect(certificateOfSettlement(relayed)).to.deep.equal(certificate);
      const failed = {
        success: false,
        errorReason: "insufficient_collateral",
        transaction: "",
        network: NETWORK,
      };
      expect(parseSettleResult(failed).error).to.equal("insufficient_collateral");
      expect(certificateOfSettlement(failed)).to.equal(null);
      expect(() => certificateOfSettlement({ success: true, transaction: "", network: NETWORK })).to.throw(
        WireError,
        "certificate",
      );
    });
  });

  describe("SuretyServerScheme", function () {
    it("upfront flow only: settle before the handler", function () {
      const scheme = new SuretyServerScheme();
      expect(scheme.scheme).to.equal(SCHEME);
      expect(scheme.paymentFlows[scheme.defaultAssetTransferMethod]).to.deep.equal({
        supported: ["upfront"],
        default: "upfront",
      });
    });

    it("passes {asset, amount} prices through, checked; money needs a moneyAsset and converts exactly", async function () {
      const scheme = new SuretyServerScheme();
      expect(
        await scheme.parsePrice(suretyPrice({ asset: TOKEN.toLowerCase(), amount: 5n }), NETWORK),
      ).to.deep.equal({
        asset: TOKEN,
        amount: "5",
      });
      expect((await rejection(scheme.parsePrice({ asset: TOKEN, amount: "0" }, NETWORK))).message).to.match(
        /price.amount/,
      );
      expect((await rejection(scheme.parsePrice("$0.01", NETWORK))).message).to.match(/moneyAsset/);
      const usd = new SuretyServerScheme({ moneyAsset: { address: TOKEN, decimals: 6 } });
      expect(await usd.parsePrice("$0.01", NETWORK)).to.deep.equal({ asset: TOKEN, amount: "10000" });
      expect(moneyToBaseUnits("1.50", 6)).to.equal(1_500_000n);
      expect(moneyToBaseUnits(0.25, 2)).to.equal(25n);
      expect(() => moneyToBaseUnits("0.0000001", 6)).to.throw(WireError, "more than 6 decimals");
      expect(() => moneyToBaseUnits("abc", 6)).to.throw(WireError, "not a decimal amount");
      expect(() => moneyToBaseUnits("0", 6)).to.throw(WireError, "greater than zero");
    });

    it("a V2 price carries the policy flat in extra; a malformed policy fails when the price is built", function () {
      const price = suretyPrice({ asset: TOKEN, amount: 1000, validationPolicy: policy() });
      expect(price.extra).to.deep.equal(policy());
      expect(() =>
        suretyPrice({
          asset: TOKEN,
          amount: 1,
          validationPolicy: { ...policy(), min_validation_score: 101 },
        }),
      ).to.throw(WireError, "validationPolicy.min_validation_score");
    });

    it("adds the facilitator's signing domain to extra, or the pinned one, and refuses a disagreement", async function () {
      const scheme = new SuretyServerScheme();
      const base = requirements({ extra: { ...policy() } });
      const enhanced = await scheme.enhancePaymentRequirements(base, kind(), []);
      expect(enhanced.extra).to.deep.equal({ ...policy(), ...DOMAIN_EXTRA });
      expect(scheme.validateFacilitatorSupport(NETWORK, kind())).to.equal(undefined);
      expect(scheme.validateFacilitatorSupport(NETWORK, kind(null))).to.match(/advertises no signing domain/);

      const pinned = new SuretyServerScheme({ domain: DOMAIN });
      expect((await pinned.enhancePaymentRequirements(base, kind(null), [])).extra).to.deep.include(
        DOMAIN_EXTRA,
      );
      const elsewhere = new SuretyServerScheme({ domain: { ...DOMAIN, verifyingContract: REGISTRY } });
      expect(elsewhere.validateFacilitatorSupport(NETWORK, kind())).to.match(/pinned to/);
      expect(scheme.validateFacilitatorSupport("eip155:1" as Network, kind())).to.match(
        /not the signing domain/,
      );
      const bad = requirements({ payTo: "0x1234" });
      expect((await rejection(scheme.enhancePaymentRequirements(bad, kind(), []))).message).to.match(
        /paymentRequirements.payTo/,
      );
    });

    it("settle hooks: a used payment is refused, one in flight too, a failed one may come again, declared first or retry", async function () {
      const ledger = new MemoryPaymentLedger();
      const scheme = new SuretyServerScheme({ ledger, clock: { nowSeconds: () => NOW } });
      const hooks = scheme.schemeHooks;
      const client = new SuretyClientScheme({
        signer: payer,
        domain: DOMAIN,
        maxAmountPerRequest: { [TOKEN]: 1000 },
        clock: { nowSeconds: () => NOW },
        reqId: () => 42n,
      });
      const { payload } = await client.createPaymentPayload(2, requirements());
      const context = {
        paymentPayload: { x402Version: 2, accepted: requirements(), payload },
        requirements: requirements(),
        declaredExtensions: {},
        phase: "before-handler" as const,
      };
      const settleError = (statusCode: number, errorReason: string) =>
        Object.assign(new Error(errorReason), { name: "SettleError", statusCode, errorReason });
      expect(await hooks.onBeforeSettle!(context)).to.equal(undefined);
      expect(await scheme.enrichSettlementPayload(context)).to.deep.equal({ settle_attempt: "first" });
      expect(await hooks.onBeforeSettle!(context)).to.deep.include({
        abort: true,
        reason: PAYMENT_IN_PROGRESS,
      });
      // Refused by the facilitator (4xx): nothing was issued, the next one is a first settlement again.
      await hooks.onSettleFailure!({ ...context, error: settleError(400, "insufficient_collateral") });
      expect(await hooks.onBeforeSettle!(context)).to.equal(undefined);
      expect(await scheme.enrichSettlementPayload(context)).to.deep.equal({ settle_attempt: "first" });
      // Outcome unknown (timeout, 5xx): the next one is this seller's retry.
      await hooks.onSettleFailure!({ ...context, error: new Error("Facilitator settle request timed out") });
      expect(await hooks.onBeforeSettle!(context)).to.equal(undefined);
      expect(await scheme.enrichSettlementPayload(context)).to.deep.equal({ settle_attempt: "retry" });
      await hooks.onSettleFailure!({ ...context, error: settleError(500, "core_unavailable") });
      expect(await hooks.onBeforeSettle!(context)).to.equal(undefined);
      expect(await scheme.enrichSettlementPayload(context)).to.deep.equal({ settle_attempt: "retry" });
      await hooks.onAfterSettle!({
        ...context,
        result: { success: true, transaction: "0x", network: NETWORK },
      });
      expect(await hooks.onBeforeSettle!(context)).to.deep.include({
        abort: true,
        reason: PAYMENT_ALREADY_USED,
      });
      const garbage = { ...context, paymentPayload: { ...context.paymentPayload, payload: { nope: 1 } } };
      expect(await hooks.onBeforeSettle!(garbage)).to.equal(undefined); // the facilitator names the problem
      expect(await scheme.enrichSettlementPayload(garbage)).to.equal(undefined);
    });

    it("settle hooks: a replay the facilitator refused stays used; a buyer may not declare settle_attempt", async function () {
      const ledger = new MemoryPaymentLedger();
      const scheme = new SuretyServerScheme({ ledger, clock: { nowSeconds: () => NOW } });
      const hooks = scheme.schemeHooks;
      const client = new SuretyClientScheme({
        signer: payer,
        domain: DOMAIN,
        maxAmountPerRequest: { [TOKEN]: 1000 },
        clock: { nowSeconds: () => NOW },
        reqId: () => 43n,
      });
      const { payload } = await client.createPaymentPayload(2, requirements());
      const context = {
        paymentPayload: { x402Version: 2, accepted: requirements(), payload },
        requirements: requirements(),
        declaredExtensions: {},
        phase: "before-handler" as const,
      };
      expect(await hooks.onBeforeSettle!(context)).to.equal(undefined);
      const replay = Object.assign(new Error(PAYMENT_ALREADY_USED), {
        name: "SettleError",
        statusCode: 400,
        errorReason: PAYMENT_ALREADY_USED,
      });
      await hooks.onSettleFailure!({ ...context, error: replay });
      expect(await hooks.onBeforeSettle!(context)).to.deep.include({
        abort: true,
        reason: PAYMENT_ALREADY_USED,
      });
      const forged = {
        ...context,
        paymentPayload: { ...context.paymentPayload, payload: { ...payload, settle_attempt: "retry" } },
      };
      expect(await hooks.onBeforeSettle!(forged)).to.deep.include({ abort: true, reason: "invalid_payload" });
    });
  });

  describe("SuretyClientScheme", function () {
    const clock = { nowSeconds: () => NOW };
    function client(overrides = {}) {
      return new SuretyClientScheme({
        signer: payer,
        domain: DOMAIN,
        maxAmountPerRequest: { [TOKEN]: 1000 },
        clock,
        ...overrides,
      });
    }

    it("signs a V1 guarantee for exactly the requirements (v2 payload), EIP-712 or EIP-191", async function () {
      for (const signingScheme of ["eip712", "eip191"] as const) {
        const result = await client({ signingScheme }).createPaymentPayload(2, requirements());
        expect(result.x402Version).to.equal(2);
        const signed = parseSignedGuarantee(result.payload);
        expect(signed.scheme).to.equal(signingScheme);
        expect(signed.claims).to.deep.include({
          version: 1,
          user: payer.address,
          recipient: SELLER,
          asset: TOKEN,
          amount: 1000n,
          timestamp: NOW,
        });
        verifyGuaranteeSignature(guaranteeHasher(DOMAIN), signed.claims, signed.signature, signingScheme);
      }
    });

    it("pays for a contract wallet with the key it registered: the claims name the wallet", async function () {
      const wallet = "0x000000000000000000000000000000000000C0De";
      const result = await client({ payer: wallet }).createPaymentPayload(2, requirements());
      const signed = parseSignedGuarantee(result.payload);
      expect(signed.claims.user.toLowerCase()).to.equal(wallet.toLowerCase());
      // The registered key signs the same EIP-712 digest (the Vault recovers it and reads the wallet's key).
      verifyGuaranteeSignature(
        guaranteeHasher(DOMAIN),
        signed.claims,
        signed.signature,
        "eip712",
        payer.address,
      );
      expect(() => client({ payer: "0x1234" })).to.throw(WireError, /payer/);
    });

    it("signs a V2 guarantee under the policy in extra; a v1 payload names scheme and network", async function () {
      const result = (await client().createPaymentPayload(
        1,
        requirements({ extra: { ...DOMAIN_EXTRA, ...policy() } }),
      )) as unknown as Record<string, unknown>;
      expect(result).to.include({ x402Version: 1, scheme: SCHEME, network: NETWORK });
      const signed = parseSignedGuarantee(result.payload);
      expect(signed.claims.version).to.equal(2);
    });

    it("refuses before signing: unlisted asset, over the limit or the x402 cap, expired policy, other Vault", async function () {
      const cases: [Promise<unknown>, string, RegExp][] = [
        [
          client().createPaymentPayload(2, requirements({ asset: REGISTRY })),
          "no_acceptable_option",
          /asset/,
        ],
        [client().createPaymentPayload(2, requirements({ amount: "1001" })), "no_acceptable_option", /limit/],
        [
          client().createPaymentPayload(2, requirements(), { maxAmountPerPayment: "999" }),
          "no_acceptable_option",
          /cap 999/,
        ],
        [
          client().createPaymentPayload(2, requirements({ extra: { ...policy(NOW), ...DOMAIN_EXTRA } })),
          "no_acceptable_option",
          /deadline/,
        ],
        [
          client({ acceptValidation: false }).createPaymentPayload(
            2,
            requirements({ extra: { ...policy(), ...DOMAIN_EXTRA } }),
          ),
          "no_acceptable_option",
          /V2/,
        ],
        [
          client().createPaymentPayload(2, requirements({ extra: { ...DOMAIN_EXTRA, eip712_version: "2" } })),
          "domain_mismatch",
          /Vault/,
        ],
        [
          client().createPaymentPayload(2, requirements({ network: "eip155:1" as Network })),
          "no_acceptable_option",
          /network/,
        ],
        [
          client().createPaymentPayload(2, requirements({ payTo: "nope" })),
          "invalid_payment_required",
          /payTo/,
        ],
        [client().createPaymentPayload(3, requirements()), "invalid_payment_required", /x402Version/],
      ];
      for (const [promise, code, message] of cases) {
        const error = await rejection(promise);
        expect(error).to.be.instanceOf(PaymentError);
        expect((error as PaymentError).code, error.message).to.equal(code);
        expect(error.message).to.match(message);
      }
    });

    it("hands the same limits to the x402 client's spend controls", function () {
      expect(client({ maxAmountPerRequest: { [TOKEN]: 1000n } }).spendControls()).to.deep.equal({
        allowedAssets: [{ network: NETWORK, asset: TOKEN.toLowerCase(), maxAmountPerPayment: "1000" }],
      });
    });
  });
});
