/** Facilitator configuration and the parsing of Core's public params into deployment parameters. */
import { expect } from "chai";
import { WireError } from "../../sdk/errors";
import {
  FacilitatorConfigError,
  facilitatorConfigFromObject,
  facilitatorEnvName,
  loadFacilitatorConfig,
  unknownFacilitatorEnv,
} from "../../facilitator/config";
import { deploymentFromPublicParams } from "../../facilitator/deployment";
import { CHAIN_ID, NETWORK, REGISTRY, VAULT, facilitatorWallet, publicParams } from "./helpers";

function configProblems(input: Record<string, unknown>): string[] {
  try {
    facilitatorConfigFromObject(input);
  } catch (error) {
    expect(error).to.be.instanceOf(FacilitatorConfigError);
    return [...(error as FacilitatorConfigError).problems];
  }
  throw new Error("expected a FacilitatorConfigError");
}

describe("facilitator config", function () {
  const key = facilitatorWallet.privateKey;

  it("has the documented defaults", function () {
    expect(facilitatorConfigFromObject({ privateKey: key })).to.deep.equal({
      host: "127.0.0.1",
      port: 8402,
      logLevel: "info",
      coreUrl: "http://127.0.0.1:8080",
      privateKey: key,
      rpcUrl: null,
      chainId: null,
      timestampWindowPastSeconds: 600,
      timestampWindowFutureSeconds: 30,
      coreTimeoutMs: 10_000,
      publicParamsTtlSeconds: 60,
    });
  });

  it("reads SURETY_FACILITATOR_* variables and names them in errors", function () {
    expect(facilitatorEnvName("coreUrl")).to.equal("SURETY_FACILITATOR_CORE_URL");
    const config = loadFacilitatorConfig({
      SURETY_FACILITATOR_PRIVATE_KEY: key,
      SURETY_FACILITATOR_PORT: "9000",
      SURETY_FACILITATOR_CORE_URL: "https://core.example/",
      SURETY_FACILITATOR_CHAIN_ID: "8453",
      SURETY_FACILITATOR_RPC_URL: "http://127.0.0.1:8545",
    });
    expect(config.port).to.equal(9000);
    expect(config.rpcUrl).to.equal("http://127.0.0.1:8545");
    expect(loadFacilitatorConfig({ SURETY_FACILITATOR_PRIVATE_KEY: key }).rpcUrl).to.equal(null);
    expect(() =>
      loadFacilitatorConfig({ SURETY_FACILITATOR_PRIVATE_KEY: key, SURETY_FACILITATOR_RPC_URL: "ws://node" }),
    ).to.throw(/SURETY_FACILITATOR_RPC_URL: must use http: or https:/);
    expect(config.coreUrl).to.equal("https://core.example");
    expect(config.chainId).to.equal(8453);
    expect(() => loadFacilitatorConfig({ SURETY_FACILITATOR_PORT: "x" }))
      .to.throw(FacilitatorConfigError)
      .with.property("problems")
      .that.deep.equals([
        'SURETY_FACILITATOR_PORT: must be an integer from 0 to 65535, got "x"',
        "SURETY_FACILITATOR_PRIVATE_KEY: is required",
      ]);
    expect(
      unknownFacilitatorEnv({ SURETY_FACILITATOR_PROT: "1", SURETY_FACILITATOR_PORT: "1" }),
    ).to.deep.equal(["SURETY_FACILITATOR_PROT"]);
  });

  it("reports every bad setting, without echoing the private key", function () {
    const secret = "0x" + "zz".repeat(32);
    const problems = configProblems({
      privateKey: secret,
      coreUrl: "ftp://core",
      timestampWindowPastSeconds: -1,
      coreTimeoutMs: 0,
      logLevel: "loud",
      bogus: 1,
    });
    expect(problems).to.have.length(6);
    expect(problems.join("\n")).not.to.contain("zz");
    expect(problems).to.include("bogus: unknown setting");
    expect(problems.find((p) => p.startsWith("privateKey:"))).to.match(/32-byte hex secp256k1 private key/);
    expect(problems.find((p) => p.startsWith("coreUrl:"))).to.match(/http: or https:/);
  });

  it("refuses a private key outside the curve order", function () {
    expect(configProblems({ privateKey: "0x" + "ff".repeat(32) })).to.deep.equal([
      "privateKey: is not a valid secp256k1 private key",
    ]);
  });
});

describe("facilitator deployment from Core's public params", function () {
  function paramsError(value: unknown): WireError {
    try {
      deploymentFromPublicParams(value);
    } catch (error) {
      expect(error).to.be.instanceOf(WireError);
      return error as WireError;
    }
    throw new Error("expected a WireError");
  }

  it("derives the deployment once: network, Vault, hasher, versions, registries, BLS key", function () {
    const deployment = deploymentFromPublicParams(publicParams());
    expect(deployment.chainId).to.equal(CHAIN_ID);
    expect(deployment.network).to.equal(NETWORK);
    expect(deployment.vault).to.equal(VAULT);
    expect(deployment.hasher.domain).to.deep.equal({
      name: "Surety",
      version: "1",
      chainId: BigInt(CHAIN_ID),
      verifyingContract: VAULT,
    });
    expect(deployment.acceptedVersions).to.deep.equal([1, 2]);
    expect(deployment.trustedRegistries).to.deep.equal([REGISTRY]);
    expect(deployment.blsPublicKey).to.have.length(96);
  });

  it("names the field of unusable params", function () {
    expect(paramsError(publicParams({ chain_id: "31337" as never })).field).to.equal(
      "public_params.chain_id",
    );
    expect(paramsError(publicParams({ public_key: [1, 2, 3] })).field).to.equal("public_params.public_key");
    expect(paramsError(publicParams({ accepted_guarantee_versions: [] })).field).to.equal(
      "public_params.accepted_guarantee_versions",
    );
    expect(paramsError(publicParams({ trusted_validation_registries: ["0x12"] })).field).to.equal(
      "public_params.trusted_validation_registries[0]",
    );
    expect(paramsError(null).field).to.equal("public_params");
  });

  it("refuses inconsistent params", function () {
    expect(
      paramsError(publicParams({ active_guarantee_domain_separator: "0x" + "00".repeat(32) })).field,
    ).to.equal("public_params.active_guarantee_domain_separator");
    expect(paramsError(publicParams({ max_accepted_guarantee_version: 1 })).field).to.equal(
      "public_params.max_accepted_guarantee_version",
    );
    expect(
      paramsError(publicParams({ validation_hash_canonicalization_version: "v0" as never })).field,
    ).to.equal("public_params.validation_hash_canonicalization_version");
  });
});
