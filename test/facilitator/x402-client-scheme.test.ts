/**
 * The buyer's side of svc-credit: choosing an option under per-asset limits,
 * building claims (V1, or V2 from the seller's policy), and the
 * `SuretyClientScheme` inside the official `x402Client` reading a 402 (v1
 * body, v2 header), signing and encoding the payment header. Every payment
 * built here is also run through the facilitator's own verification, so "the
 * buyer builds it" means "the facilitator accepts it".
 */
import { expect } from "chai";
import { Wallet } from "ethers";
import { x402Client, x402HTTPClient } from "@x402/core/client";
import { wrapFetchWithPayment, x402Client as FetchX402Client } from "@x402/fetch";
import { wrapAxiosWithPayment, x402Client as AxiosX402Client } from "@x402/axios";
import axios from "axios";
import { PaymentRequiredV1Schema, PaymentRequiredV2Schema } from "@x402/core/schemas";
import type { Network } from "@x402/core/types";
import {
  PaymentError,
  type PayerSigner,
  SuretyClientScheme,
  type SuretyClientSchemeOptions,
  buildClaims,
  domainFromPublicParams,
  domainNetwork,
  parseSpendingLimits,
  randomReqId,
  selectPaymentOption,
} from "../../sdk/kits/x402-scheme";
import { verifyGuaranteeSignature } from "../../sdk/eip712";
import { WireError } from "../../sdk/errors";
import {
  PAYMENT_SIGNATURE_HEADER,
  SCHEME,
  X_PAYMENT_HEADER,
  decodePaymentHeader,
  encodeBase64Json,
  extraFromPolicy,
  parsePaymentRequirements,
  parseFacilitatorRequest,
} from "../../sdk/x402";
import { ZERO_ADDRESS } from "../../sdk/wire";
import { ManualClock } from "../../facilitator/clock";
import { verifyPayment } from "../../facilitator/verify";
import {
  CHAIN_ID,
  NETWORK,
  T0,
  TOKEN,
  VAULT,
  payer,
  publicParams,
  seller,
  testDeployment,
  testPolicy,
} from "./helpers";

const deployment = testDeployment();
const domain = domainFromPublicParams(publicParams());
const limits = parseSpendingLimits({ [TOKEN]: 5_000n, [ZERO_ADDRESS]: "100" });

function option(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    scheme: SCHEME,
    network: NETWORK,
    amount: "1000",
    payTo: seller.address,
    asset: TOKEN,
    maxTimeoutSeconds: 60,
    extra: {},
    ...overrides,
  };
}

function v1Option(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const { amount, ...rest } = option(overrides);
  return {
    ...rest,
    maxAmountRequired: amount,
    resource: "https://seller.test/weather",
    description: "weather",
    mimeType: "application/json",
  };
}

function v2Required(accepts: Record<string, unknown>[]): Record<string, unknown> {
  return { x402Version: 2, resource: { url: "https://seller.test/weather" }, accepts };
}

function rules(overrides: Partial<Parameters<typeof selectPaymentOption>[1]> = {}) {
  return { network: NETWORK, limits, nowSeconds: T0, ...overrides };
}

/** The facilitator's verdict on a payment header against the seller's requirements. */
function facilitatorVerdict(headerValue: string, requirements: Record<string, unknown>) {
  const paymentPayload = decodePaymentHeader(headerValue);
  const request = parseFacilitatorRequest({
    paymentPayload: JSON.parse(Buffer.from(headerValue, "base64").toString("utf8")),
    paymentRequirements: requirements,
  });
  expect(request.paymentPayload).to.deep.equal(paymentPayload);
  return verifyPayment(request, {
    deployment,
    clock: new ManualClock(T0),
    timestampWindow: { pastSeconds: 600, futureSeconds: 30 },
  });
}

describe("buyer client (pure parts)", function () {
  describe("domainFromPublicParams", function () {
    it("takes name, version, chain id and Vault from Core's public params", function () {
      expect(domain).to.deep.equal({
        name: "Surety",
        version: "1",
        chainId: BigInt(CHAIN_ID),
        verifyingContract: VAULT,
      });
      expect(domainNetwork(domain)).to.equal(NETWORK);
    });

    it("names the field that is wrong", function () {
      expect(() => domainFromPublicParams(publicParams({ chain_id: 0 }))).to.throw(
        WireError,
        "public_params.chain_id",
      );
      expect(() => domainFromPublicParams({ ...publicParams(), contract_address: "0x12" })).to.throw(
        WireError,
        "public_params.contract_address",
      );
    });
  });

  describe("spending limits and selection", function () {
    it("validates limits: addresses and amounts, at least one asset", function () {
      expect(() => parseSpendingLimits({ "0x12": 1n })).to.throw(WireError, "maxAmountPerRequest.0x12");
      expect(() => parseSpendingLimits({ [TOKEN]: "-5" })).to.throw(
        WireError,
        `maxAmountPerRequest.${TOKEN}`,
      );
      expect(() => parseSpendingLimits({})).to.throw(WireError, "maxAmountPerRequest");
      expect(parseSpendingLimits({ [TOKEN.toLowerCase()]: 7 }).get(TOKEN.toLowerCase())).to.equal(7n);
    });

    it("accepts an amount equal to the limit and refuses one above it", function () {
      const at = parsePaymentRequirements(option({ amount: "5000" }));
      expect(selectPaymentOption([at], rules()).amount).to.equal(5_000n);
      const above = parsePaymentRequirements(option({ amount: "5001" }));
      expect(() => selectPaymentOption([above], rules()))
        .to.throw(PaymentError, "exceeds the limit 5000")
        .with.property("rejections")
        .that.deep.equals([
          { index: 0, reason: "amount_over_limit", message: "amount 5001 exceeds the limit 5000" },
        ]);
    });

    it("picks the first acceptable option in the seller's order, listing why others were refused", function () {
      const accepts = [
        option({ network: "eip155:1" }),
        option({ asset: "0x000000000000000000000000000000000000dEaD" }),
        option({ asset: ZERO_ADDRESS, amount: "100" }),
        option({ amount: "1" }),
      ].map((o) => parsePaymentRequirements(o));
      const selected = selectPaymentOption(accepts, rules());
      expect(selected.index).to.equal(2);
      expect(selected.requirements.asset).to.equal(ZERO_ADDRESS);
      try {
        selectPaymentOption(accepts.slice(0, 2), rules());
        expect.fail("should refuse");
      } catch (error) {
        expect((error as PaymentError).code).to.equal("no_acceptable_option");
        expect((error as PaymentError).rejections.map((r) => r.reason)).to.deep.equal([
          "network_mismatch",
          "asset_not_allowed",
        ]);
      }
    });

    it("refuses an option without amount", function () {
      const noAmount = parsePaymentRequirements({ ...option(), amount: undefined });
      expect(() => selectPaymentOption([noAmount], rules())).to.throw(PaymentError, "names no amount");
    });

    it("applies the validation rules: opt-out, expired deadline, foreign validation_chain_id", function () {
      const v2 = (policyOverrides = {}, extra = {}) =>
        parsePaymentRequirements(
          option({ extra: { ...extraFromPolicy(testPolicy(policyOverrides)), ...extra } }),
        );
      expect(selectPaymentOption([v2()], rules()).index).to.equal(0);
      const reasons = (requirements: ReturnType<typeof v2>, overrides = {}) => {
        try {
          selectPaymentOption([requirements], rules(overrides));
          return null;
        } catch (error) {
          return (error as PaymentError).rejections[0].reason;
        }
      };
      expect(reasons(v2(), { acceptValidation: false })).to.equal("validation_not_accepted");
      expect(reasons(v2({ deadline: T0 }))).to.equal("policy_expired");
      expect(reasons(v2({}, { validation_chain_id: 1 }))).to.equal("policy_chain_mismatch");
    });
  });

  describe("buildClaims", function () {
    it("builds V1 claims paying exactly the requirements", function () {
      const requirements = parsePaymentRequirements(v1Option({ payTo: seller.address.toLowerCase() }));
      expect(
        buildClaims(requirements, { payer: payer.address.toLowerCase(), reqId: 42n, timestamp: T0 }),
      ).to.deep.equal({
        version: 1,
        user: payer.address,
        recipient: seller.address,
        reqId: 42n,
        amount: 1000n,
        asset: TOKEN,
        timestamp: T0,
      });
    });

    it("builds V2 claims under the seller's policy when extra carries one", function () {
      const policy = testPolicy();
      const requirements = parsePaymentRequirements(
        option({ extra: extraFromPolicy(policy, { note: "x" }) }),
      );
      const claims = buildClaims(requirements, { payer: payer.address, reqId: 1n, timestamp: T0 });
      expect(claims.version).to.equal(2);
      expect(claims.version === 2 && claims.policy).to.deep.equal(policy);
    });

    it("draws 128-bit random req_ids", function () {
      const ids = new Set(Array.from({ length: 64 }, () => randomReqId()));
      expect(ids.size).to.equal(64);
      for (const id of ids) expect(id < 1n << 128n).to.equal(true);
      expect([...ids].some((id) => id >= 1n << 120n)).to.equal(true);
    });
  });

  describe("SuretyClientScheme in the official x402Client", function () {
    /** Reads the 402 as @x402/fetch does, pays it, and returns the payment header. */
    async function pay(required: Record<string, unknown>, options: Partial<SuretyClientSchemeOptions> = {}) {
      const scheme = new SuretyClientScheme({
        signer: payer,
        domain,
        maxAmountPerRequest: { [TOKEN]: 5_000n, [ZERO_ADDRESS]: "100" },
        clock: { nowSeconds: () => T0 },
        ...options,
      });
      const network = NETWORK as Network;
      const client = x402Client.fromConfig({
        schemes: [
          { network, client: scheme },
          { network, client: scheme, x402Version: 1 },
        ],
        spendControls: scheme.spendControls(),
      });
      const http = new x402HTTPClient(client);
      const header = required.x402Version === 2 ? encodeBase64Json(required) : null;
      const paymentRequired = http.getPaymentRequiredResponse(
        (name) => (name === "PAYMENT-REQUIRED" ? header : null),
        required.x402Version === 1 ? required : undefined,
      );
      const [[name, value]] = Object.entries(
        http.encodePaymentSignatureHeader(await client.createPaymentPayload(paymentRequired)),
      );
      return { name, value };
    }

    it("v1: X-PAYMENT with {x402Version: 1, scheme, network, payload}, accepted by the facilitator", async function () {
      const raw = v1Option();
      const header = await pay({ x402Version: 1, accepts: [raw] }, { reqId: () => 9n });
      expect(header.name).to.equal(X_PAYMENT_HEADER);
      const decoded = decodePaymentHeader(header.value);
      expect(decoded).to.deep.include({ x402Version: 1, scheme: SCHEME, network: NETWORK });
      expect(decoded.payload.claims).to.deep.include({ reqId: 9n, user: payer.address, amount: 1000n });
      expect(decoded.payload.scheme).to.equal("eip712");
      expect(facilitatorVerdict(header.value, raw)).to.include({ isValid: true });
    });

    it("v2: PAYMENT-SIGNATURE echoing the chosen option verbatim in accepted, with the resource", async function () {
      const raw = option({ payTo: seller.address.toLowerCase(), extra: extraFromPolicy(testPolicy()) });
      const header = await pay(v2Required([raw]));
      expect(header.name).to.equal(PAYMENT_SIGNATURE_HEADER);
      const json = JSON.parse(Buffer.from(header.value, "base64").toString("utf8"));
      expect(json.accepted).to.deep.equal(raw);
      expect(json.resource).to.deep.equal({ url: "https://seller.test/weather" });
      expect(json.payload.claims.version).to.equal(2);
      expect(facilitatorVerdict(header.value, raw)).to.include({ isValid: true });
    });

    it("signs with EIP-191 on request", async function () {
      const header = await pay({ x402Version: 1, accepts: [v1Option()] }, { signingScheme: "eip191" });
      const { claims, signature, scheme } = decodePaymentHeader(header.value).payload;
      expect(scheme).to.equal("eip191");
      expect(() => verifyGuaranteeSignature(deployment.hasher, claims, signature, "eip191")).not.to.throw();
      expect(facilitatorVerdict(header.value, v1Option())).to.include({ isValid: true });
    });

    it("refuses to send a signature that does not recover to the payer (signature_invalid)", async function () {
      const other = new Wallet("0x" + "66".repeat(32));
      const lying: PayerSigner = {
        getAddress: async () => payer.address,
        signTypedData: (d, t, v) => other.signTypedData(d, t, v),
        signMessage: (m) => other.signMessage(m),
      };
      await pay({ x402Version: 1, accepts: [v1Option()] }, { signer: lying }).then(
        () => expect.fail("should refuse"),
        (error: PaymentError) => expect(error.code).to.equal("signature_invalid"),
      );
    });

    it("refuses before signing when no option is acceptable", async function () {
      let signed = false;
      const watching: PayerSigner = {
        getAddress: async () => payer.address,
        signTypedData: async (d, t, v) => ((signed = true), payer.signTypedData(d, t, v)),
        signMessage: async (m) => ((signed = true), payer.signMessage(m)),
      };
      const required = { x402Version: 1, accepts: [v1Option({ amount: "999999" })] };
      await pay(required, { signer: watching }).then(
        () => expect.fail("should refuse"),
        (error: Error) => expect(error.message).to.match(/spendControls|exceeds/),
      );
      expect(signed).to.equal(false);
    });
  });

  describe("refusal codes through @x402/fetch and @x402/axios (docs/x402-integration.md)", function () {
    // A seller whose 402 names another Vault (domain_mismatch) or asks more than the limit (amount_over_limit).
    const otherVault = option({
      extra: {
        contract_address: seller.address,
        chain_id: CHAIN_ID,
        eip712_name: "Surety",
        eip712_version: "1",
      },
    });
    const tooDear = option({ amount: "999999" });
    const required = (accepts: Record<string, unknown>[]) => encodeBase64Json(v2Required(accepts));
    const scheme = () =>
      new SuretyClientScheme({
        signer: payer,
        domain,
        maxAmountPerRequest: { [TOKEN]: 5_000n },
        clock: { nowSeconds: () => T0 },
      });
    const network = NETWORK as Network;

    for (const [what, accepts, code, reason] of [
      ["another Vault", [otherVault], "domain_mismatch", undefined],
      ["a price over the limit", [tooDear], "no_acceptable_option", "amount_over_limit"],
    ] as const) {
      it(`${what}: only the message reaches the caller; onPaymentCreationFailure sees the PaymentError`, async function () {
        // @x402/fetch (@x402/core 2.27), spendControls off so that the scheme's own limit decides.
        let refusal: PaymentError | null = null;
        const client = FetchX402Client.fromConfig({
          schemes: [{ network, client: scheme() }],
          spendControls: false,
        });
        client.onPaymentCreationFailure(async ({ error }) => {
          if (error instanceof PaymentError) refusal = error;
        });
        const sellerFetch = async () =>
          new Response("{}", { status: 402, headers: { "PAYMENT-REQUIRED": required([...accepts]) } });
        const failure = await wrapFetchWithPayment(
          sellerFetch,
          client,
        )("https://seller.test/weather").then(
          () => expect.fail("should refuse"),
          (error: Error) => error,
        );
        expect(failure).to.not.be.instanceOf(PaymentError);
        expect(failure.message).to.match(/^Failed to create payment payload: /);
        expect(refusal).to.be.instanceOf(PaymentError);
        expect(refusal!.code).to.equal(code);
        if (reason !== undefined) expect(refusal!.rejections[0].reason).to.equal(reason);
        expect(failure.message).to.equal(`Failed to create payment payload: ${refusal!.message}`);

        // @x402/axios 2.11 (its own @x402/core 2.11: no spendControls at all): the same hook.
        let axiosRefusal: PaymentError | null = null;
        const axiosClient = AxiosX402Client.fromConfig({ schemes: [{ network, client: scheme() }] });
        axiosClient.onPaymentCreationFailure(async ({ error }) => {
          if (error instanceof PaymentError) axiosRefusal = error;
        });
        const instance = axios.create({
          adapter: async (config) => {
            const response = {
              data: {},
              status: 402,
              statusText: "Payment Required",
              headers: { "payment-required": required([...accepts]) },
              config,
              request: {},
            };
            throw new axios.AxiosError("402", "ERR_BAD_REQUEST", config, {}, response);
          },
        });
        const axiosFailure = await wrapAxiosWithPayment(instance, axiosClient)
          .get("https://seller.test/weather")
          .then(
            () => expect.fail("should refuse"),
            (error: Error) => error,
          );
        expect(axiosFailure.message).to.equal(`Failed to create payment payload: ${axiosRefusal!.message}`);
        expect(axiosRefusal!.code).to.equal(code);
      });
    }
  });

  it("the reference x402 schemas accept what the buyer parses", function () {
    expect(PaymentRequiredV2Schema.safeParse(v2Required([option()])).success).to.equal(true);
    expect(PaymentRequiredV1Schema.safeParse({ x402Version: 1, accepts: [v1Option()] }).success).to.equal(
      true,
    );
  });
});
