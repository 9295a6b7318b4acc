/**
 * The buyer's side of `svc-credit` in the official x402 client packages
 * (`@x402/fetch`, `@x402/axios`, `@x402/core/client`): a
 * `SchemeNetworkClient` that turns the requirements the x402 client chose
 * into a signed guarantee. Its I/O: the payer's wallet signs, the wall clock
 * dates the claims, and `suretyClientSchemeFromCore` reads Core's public params
 * over `fetch`.
 *
 * The client is the payer's policy, not the seller's: it signs only under the
 * EIP-712 domain it was given (a seller's `extra` naming another Vault or
 * chain is refused before anything is signed), pays only assets listed in
 * its per-asset limits and at most their limit, and refuses expired or
 * foreign-chain validation policies. `spendControls()` hands the same limits
 * to the x402 client, so its own filter agrees with ours.
 */
import type {
  Network,
  PaymentPayloadContext,
  PaymentPayloadResult,
  PaymentRequirements as X402PaymentRequirements,
  SchemeNetworkClient,
} from "@x402/core/types";
import { type SigningScheme, parseSignatureHex, toWireSignedGuarantee } from "../../claims";
import {
  type GuaranteeDomainParams,
  type GuaranteeHasher,
  guaranteeHasher,
  signGuarantee,
  verifyGuaranteeSignature,
} from "../../eip712";
import { SignatureError, WireError } from "../../errors";
import { formatUint, parseAddress } from "../../wire";
import {
  SCHEME,
  domainDifference,
  domainFromExtra,
  parsePaymentRequirements,
  requiredAmount,
} from "../../x402";
import { type PayerSigner, buildClaims, randomReqId } from "./claims";
import { domainFromPublicParams, domainNetwork } from "./domain";
import { PaymentError } from "./errors";
import { type ParsedSpendingLimits, type SpendingLimits, parseSpendingLimits, rejectOption } from "./select";

export interface SchemeClock {
  /** Unix seconds. */
  nowSeconds(): number;
}

const systemClock: SchemeClock = { nowSeconds: () => Math.floor(Date.now() / 1000) };

export interface SuretyClientSchemeOptions {
  /** The payer's wallet (an ethers Signer). The private key never leaves it. */
  signer: PayerSigner;
  /**
   * The paying address when it is not `signer`'s own: a contract wallet whose guarantee signing key, the one
   * it registered in the Vault (`Vault.setGuaranteeSigner`), `signer` holds. The claims name this address as
   * `user_address`, and `signer` signs the same EIP-712 digest (docs/protocol.md "Payer signatures").
   */
  payer?: string;
  /** The EIP-712 domain to sign under (Core's public params; see {@link suretyClientSchemeFromCore}). */
  domain: GuaranteeDomainParams;
  /** Per-payment ceiling per asset address (zero address = ETH), base units; unlisted assets are never paid. */
  maxAmountPerRequest: SpendingLimits;
  /** Default `eip712`; `eip191` for wallets without typed-data signing. */
  signingScheme?: SigningScheme;
  /** Pay options that demand a V2 validated guarantee (default true). */
  acceptValidation?: boolean;
  clock?: SchemeClock;
  /** Source of `req_id`s; default 128 random bits per payment. */
  reqId?: () => bigint;
}

/** The `SpendControls` entries of `@x402/core`'s client config, one per asset limit. */
export interface SuretySpendControls {
  allowedAssets: { network: Network; asset: string; maxAmountPerPayment: string }[];
}

/** `svc-credit` for `x402Client.register(network, scheme)` / `wrapFetchWithPaymentFromConfig`. */
export class SuretyClientScheme implements SchemeNetworkClient {
  readonly scheme = SCHEME;
  /** CAIP-2 network of the signing domain: the only network this client pays on. */
  readonly network: Network;
  private readonly hasher: GuaranteeHasher;
  private readonly limits: ParsedSpendingLimits;
  private readonly signingScheme: SigningScheme;
  private readonly payer: string | null;

  constructor(private readonly options: SuretyClientSchemeOptions) {
    this.payer = options.payer === undefined ? null : parseAddress(options.payer, "payer");
    this.hasher = guaranteeHasher(options.domain);
    this.network = domainNetwork(this.hasher.domain) as Network;
    this.limits = parseSpendingLimits(options.maxAmountPerRequest);
    this.signingScheme = options.signingScheme ?? "eip712";
  }

  /**
   * The same per-asset limits for the x402 client's own spend controls
   * (`spendControls` in `wrapFetchWithPaymentFromConfig`'s config). Without
   * them `@x402/core` filters out any asset it has no USD table for.
   */
  spendControls(): SuretySpendControls {
    return {
      allowedAssets: [...this.limits].map(([asset, limit]) => ({
        network: this.network,
        asset,
        maxAmountPerPayment: formatUint(limit),
      })),
    };
  }

  /**
   * Builds and signs the guarantee that pays exactly `requirements`. Throws
   * {@link PaymentError} (`no_acceptable_option` with the rejection,
   * `domain_mismatch`, `signature_invalid`) before anything is sent; the
   * x402 client turns that into a rejected fetch.
   */
  async createPaymentPayload(
    x402Version: number,
    requirements: X402PaymentRequirements,
    context?: PaymentPayloadContext,
  ): Promise<PaymentPayloadResult> {
    if (x402Version !== 1 && x402Version !== 2) {
      throw new PaymentError("invalid_payment_required", `x402Version ${x402Version} is not 1 or 2`);
    }
    let parsed;
    try {
      parsed = parsePaymentRequirements(requirements, "paymentRequirements");
    } catch (error) {
      if (error instanceof WireError) {
        throw new PaymentError(
          "invalid_payment_required",
          `the requirements are not usable: ${error.message}`,
        );
      }
      throw error;
    }
    const domain = this.hasher.domain;
    const offered = domainFromExtra(parsed.extra ?? null);
    if (offered !== null && domainDifference(offered, domain) !== null) {
      throw new PaymentError(
        "domain_mismatch",
        `the seller asks for a guarantee on Vault ${offered.verifyingContract} (chain ${offered.chainId}); ` +
          `this client signs for ${domain.verifyingContract} (chain ${domain.chainId})`,
      );
    }
    const nowSeconds = (this.options.clock ?? systemClock).nowSeconds();
    const rejection = rejectOption(parsed, {
      network: this.network,
      limits: this.limits,
      nowSeconds,
      acceptValidation: this.options.acceptValidation,
    });
    if (rejection !== null) {
      throw new PaymentError("no_acceptable_option", rejection.message, [{ index: 0, ...rejection }]);
    }
    const amount = requiredAmount(parsed)!;
    const cap = context?.maxAmountPerPayment;
    if (cap !== undefined && /^\d+$/.test(cap) && amount > BigInt(cap)) {
      const message = `amount ${amount} exceeds the x402 client's cap ${cap}`;
      throw new PaymentError("no_acceptable_option", message, [
        { index: 0, reason: "amount_over_limit", message },
      ]);
    }

    const signer = await this.options.signer.getAddress();
    const claims = buildClaims(parsed, {
      payer: this.payer ?? signer,
      reqId: (this.options.reqId ?? randomReqId)(),
      timestamp: nowSeconds,
    });
    const signature = await signGuarantee(this.options.signer, this.hasher, claims, this.signingScheme);
    try {
      verifyGuaranteeSignature(this.hasher, claims, parseSignatureHex(signature), this.signingScheme, signer);
    } catch (error) {
      if (error instanceof SignatureError || error instanceof WireError) {
        throw new PaymentError(
          "signature_invalid",
          `the wallet's ${this.signingScheme} signature: ${error.message}`,
        );
      }
      throw error;
    }
    const payload = toWireSignedGuarantee({
      claims,
      signature: parseSignatureHex(signature),
      scheme: this.signingScheme,
    }) as unknown as Record<string, unknown>;
    // v1 payloads are sent as returned, so they name scheme and network themselves;
    // the x402 client wraps a v2 payload with `accepted` and `resource`.
    if (x402Version === 1) {
      return { x402Version: 1, scheme: SCHEME, network: parsed.network, payload } as PaymentPayloadResult;
    }
    return { x402Version: 2, payload };
  }
}

/** A {@link SuretyClientScheme} whose domain is read once from Core's `GET /core/public-params`. */
export async function suretyClientSchemeFromCore(
  coreUrl: string,
  options: Omit<SuretyClientSchemeOptions, "domain">,
  fetchImpl: typeof fetch = fetch,
): Promise<SuretyClientScheme> {
  let domain;
  try {
    const response = await fetchImpl(new URL("/core/public-params", coreUrl));
    if (!response.ok) throw new Error(`GET /core/public-params answered ${response.status}`);
    domain = domainFromPublicParams(await response.json());
  } catch (error) {
    throw new PaymentError(
      "domain_unavailable",
      `the signing domain could not be read from ${coreUrl}: ${(error as Error).message}`,
    );
  }
  return new SuretyClientScheme({ ...options, domain });
}
