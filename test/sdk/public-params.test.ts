import { expect } from "chai";
import { blsKeyFromSecret } from "../../sdk/bls";
import { WireError } from "../../sdk/errors";
import { certificateDomain, VALIDATION_HASH_CANONICALIZATION_VERSION } from "../../sdk/ids";
import {
  buildWirePublicParams,
  buildWireTokenList,
  parsePublicParams,
  parseTokenList,
  type PublicParamsInput,
  type WirePublicParams,
} from "../../sdk/public-params";

const VAULT = "0x5FbDB2315678afecb367f032d93F642f64180aa3";
const REGISTRY = "0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0";
const TOKEN = "0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512";
const CLEARING_HOUSE = "0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0";
const TIMINGS = {
  cycleLength: 60,
  commitDelay: 30,
  challengeWindow: 30,
  paymentWindow: 120,
  defaultWindow: 60,
  withdrawalGracePeriod: 360,
  confirmationLag: 12,
};
const key = blsKeyFromSecret("0x" + "55".repeat(32));

const input: PublicParamsInput = {
  blsPublicKey: key.publicKey,
  vault: VAULT,
  rpcUrl: "http://127.0.0.1:8545",
  eip712Name: "Surety",
  eip712Version: "1",
  chainId: 31337,
  acceptedVersions: [1, 2],
  trustedRegistries: [REGISTRY],
  clearingHouse: CLEARING_HOUSE,
  timings: TIMINGS,
  latestValidationDeadline: 1_750_000_179,
};

function wire(overrides: Partial<Record<keyof WirePublicParams, unknown>> = {}): Record<string, unknown> {
  return { ...buildWirePublicParams(input), ...overrides };
}

function fieldOf(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    expect(error).to.be.instanceOf(WireError);
    return (error as WireError).field;
  }
  throw new Error("expected a WireError");
}

describe("sdk/public-params: GET /core/public-params", () => {
  it("builds every field of the spec, deriving the domain, the max version and the canonicalization", () => {
    const params = buildWirePublicParams(input);
    expect(Object.keys(params).sort()).to.deep.equal(
      [
        "public_key",
        "contract_address",
        "ethereum_http_rpc_url",
        "eip712_name",
        "eip712_version",
        "chain_id",
        "max_accepted_guarantee_version",
        "accepted_guarantee_versions",
        "active_guarantee_domain_separator",
        "trusted_validation_registries",
        "validation_hash_canonicalization_version",
        // Additions (docs/operator-api.md)
        "clearing_house_address",
        "protocol_timings",
        "latest_validation_deadline",
      ].sort(),
    );
    expect(params.protocol_timings).to.deep.equal({
      cycle_length_seconds: 60,
      commit_delay_seconds: 30,
      challenge_window_seconds: 30,
      payment_window_seconds: 120,
      default_window_seconds: 60,
      withdrawal_grace_period_seconds: 360,
      confirmation_lag_seconds: 12,
    });
    expect(params).to.include({
      clearing_house_address: CLEARING_HOUSE,
      latest_validation_deadline: 1_750_000_179,
    });
    const unknown = buildWirePublicParams({ ...input, timings: null, latestValidationDeadline: null });
    expect(unknown).to.include({ protocol_timings: null, latest_validation_deadline: null });
    expect(params.public_key).to.have.length(96);
    expect(params.max_accepted_guarantee_version).to.equal(2);
    expect(params.active_guarantee_domain_separator).to.equal(
      certificateDomain({ chainId: 31337, vault: VAULT }),
    );
    expect(params.validation_hash_canonicalization_version).to.equal(
      VALIDATION_HASH_CANONICALIZATION_VERSION,
    );
    expect(() => buildWirePublicParams({ ...input, acceptedVersions: [] })).to.throw(RangeError);
  });

  it("parses what it builds back into the input (after JSON)", () => {
    const parsed = parsePublicParams(JSON.parse(JSON.stringify(buildWirePublicParams(input))));
    expect(parsed).to.deep.include({ ...input, blsPublicKey: parsed.blsPublicKey });
    expect(Buffer.from(parsed.blsPublicKey).equals(Buffer.from(key.publicKey))).to.equal(true);
    expect(parsed.maxAcceptedVersion).to.equal(2);
    expect(parsed.certificateDomain).to.equal(certificateDomain({ chainId: 31337, vault: VAULT }));
    expect(parsed.canonicalizationVersion).to.equal(VALIDATION_HASH_CANONICALIZATION_VERSION);
  });

  it("reads the additions as null when a Core does not serve them", () => {
    const older = wire();
    delete older.clearing_house_address;
    delete older.protocol_timings;
    delete older.latest_validation_deadline;
    expect(parsePublicParams(older)).to.include({
      clearingHouse: null,
      timings: null,
      latestValidationDeadline: null,
    });
    expect(parsePublicParams(wire({ protocol_timings: null }))).to.include({ timings: null });
    // A Core from before the confirmation lag: the lag reads as 0 (the invariant without it).
    const noLag = wire();
    delete (noLag.protocol_timings as Record<string, unknown>).confirmation_lag_seconds;
    expect(parsePublicParams(noLag).timings?.confirmationLag).to.equal(0);
  });

  it("normalises: checksummed addresses, distinct sorted versions, distinct registries", () => {
    const parsed = parsePublicParams(
      wire({
        contract_address: VAULT.toLowerCase(),
        accepted_guarantee_versions: [2, 1, 2],
        trusted_validation_registries: [REGISTRY.toLowerCase(), REGISTRY],
      }),
    );
    expect(parsed.vault).to.equal(VAULT);
    expect(parsed.acceptedVersions).to.deep.equal([1, 2]);
    expect(parsed.trustedRegistries).to.deep.equal([REGISTRY]);
  });

  const broken: [string, Partial<Record<keyof WirePublicParams, unknown>>][] = [
    ["public_key", { public_key: [1, 2, 3] }],
    ["contract_address", { contract_address: "0x12" }],
    ["ethereum_http_rpc_url", { ethereum_http_rpc_url: 8545 }],
    ["eip712_name", { eip712_name: "" }],
    ["eip712_version", { eip712_version: null }],
    ["chain_id", { chain_id: "31337" }],
    ["chain_id", { chain_id: 0 }],
    ["max_accepted_guarantee_version", { max_accepted_guarantee_version: 3 }],
    ["accepted_guarantee_versions", { accepted_guarantee_versions: [] }],
    ["accepted_guarantee_versions[1]", { accepted_guarantee_versions: [1, 7] }],
    ["active_guarantee_domain_separator", { active_guarantee_domain_separator: "0x12" }],
    ["trusted_validation_registries", { trusted_validation_registries: REGISTRY }],
    ["trusted_validation_registries[0]", { trusted_validation_registries: ["0x12"] }],
    ["validation_hash_canonicalization_version", { validation_hash_canonicalization_version: 1 }],
    ["clearing_house_address", { clearing_house_address: "0x12" }],
    ["protocol_timings", { protocol_timings: [] }],
    ["protocol_timings.commit_delay_seconds", { protocol_timings: { cycle_length_seconds: 60 } }],
    [
      "protocol_timings.challenge_window_seconds",
      {
        protocol_timings: {
          cycle_length_seconds: 60,
          commit_delay_seconds: 30,
          payment_window_seconds: 120,
          default_window_seconds: 60,
          withdrawal_grace_period_seconds: 360,
        },
      },
    ],
    [
      "protocol_timings.cycle_length_seconds",
      {
        protocol_timings: {
          cycle_length_seconds: 0,
          commit_delay_seconds: 0,
          challenge_window_seconds: 1,
          payment_window_seconds: 1,
          default_window_seconds: 0,
          withdrawal_grace_period_seconds: 2,
        },
      },
    ],
    ["latest_validation_deadline", { latest_validation_deadline: "1750000179" }],
  ];
  for (const [field, overrides] of broken) {
    it(`names ${field} when it is unusable (${JSON.stringify(overrides).slice(0, 60)})`, () => {
      expect(fieldOf(() => parsePublicParams(wire(overrides)))).to.equal(`public_params.${field}`);
    });
  }

  it("names a missing field and the body itself", () => {
    const missing = wire();
    delete missing.eip712_name;
    expect(fieldOf(() => parsePublicParams(missing, "params"))).to.equal("params.eip712_name");
    expect(fieldOf(() => parsePublicParams([]))).to.equal("public_params");
  });

  it("refuses inconsistent params", () => {
    const otherVaultDomain = certificateDomain({ chainId: 31337, vault: REGISTRY });
    expect(
      fieldOf(() => parsePublicParams(wire({ active_guarantee_domain_separator: otherVaultDomain }))),
    ).to.equal("public_params.active_guarantee_domain_separator");
    expect(fieldOf(() => parsePublicParams(wire({ chain_id: 1 })))).to.equal(
      "public_params.active_guarantee_domain_separator",
    );
    expect(fieldOf(() => parsePublicParams(wire({ max_accepted_guarantee_version: 1 })))).to.equal(
      "public_params.max_accepted_guarantee_version",
    );
    expect(
      fieldOf(() => parsePublicParams(wire({ validation_hash_canonicalization_version: "v0" }))),
    ).to.equal("public_params.validation_hash_canonicalization_version");
  });
});

describe("sdk/public-params: GET /core/tokens", () => {
  const tokens = [{ symbol: "TUSD", address: TOKEN, decimals: 6 }];

  it("builds and parses the token list", () => {
    const built = buildWireTokenList(31337, tokens);
    expect(built).to.deep.equal({ chain_id: 31337, tokens });
    expect(built.tokens[0]).to.not.equal(tokens[0]);
    const parsed = parseTokenList({
      chain_id: 31337,
      tokens: [{ symbol: "TUSD", address: TOKEN.toLowerCase(), decimals: 6 }],
    });
    expect(parsed).to.deep.equal(built);
  });

  it("names the faulty field", () => {
    const ok = { symbol: "TUSD", address: TOKEN, decimals: 6 };
    expect(fieldOf(() => parseTokenList(null))).to.equal("tokens_response");
    expect(fieldOf(() => parseTokenList({ chain_id: 0, tokens: [] }))).to.equal("tokens_response.chain_id");
    expect(fieldOf(() => parseTokenList({ chain_id: 1, tokens: {} }))).to.equal("tokens_response.tokens");
    expect(fieldOf(() => parseTokenList({ chain_id: 1, tokens: [ok, 5] }))).to.equal(
      "tokens_response.tokens[1]",
    );
    expect(fieldOf(() => parseTokenList({ chain_id: 1, tokens: [{ ...ok, symbol: 1 }] }))).to.equal(
      "tokens_response.tokens[0].symbol",
    );
    expect(fieldOf(() => parseTokenList({ chain_id: 1, tokens: [{ ...ok, address: "0x1" }] }))).to.equal(
      "tokens_response.tokens[0].address",
    );
    expect(fieldOf(() => parseTokenList({ chain_id: 1, tokens: [{ ...ok, decimals: 256 }] }))).to.equal(
      "tokens_response.tokens[0].decimals",
    );
  });
});
