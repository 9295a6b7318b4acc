import { expect } from "chai";
import { getAddress } from "ethers";
import { WireError } from "../../sdk/errors";
import {
  ADDRESS_CHECKSUM_CACHE_ENTRIES,
  MAX_UINT256,
  addressChecksumCacheSize,
  describeType,
  formatNetwork,
  formatUint,
  parseAddress,
  parseBytes32,
  parseHexBytes,
  parseNetwork,
  parseObject,
  parseSafeInteger,
  parseString,
  parseTimestamp,
  parseUint256,
  parseVersion,
  sameAddress,
} from "../../sdk/wire";

const CHECKSUMMED = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";

function expectWireError(fn: () => unknown, field: string, reason?: RegExp): WireError {
  let caught: unknown;
  try {
    fn();
  } catch (error) {
    caught = error;
  }
  expect(caught, "expected a WireError").to.be.instanceOf(WireError);
  const error = caught as WireError;
  expect(error.field).to.equal(field);
  expect(error.message.startsWith(`${field}: `)).to.be.true;
  if (reason) expect(error.reason).to.match(reason);
  return error;
}

describe("sdk/wire", () => {
  it("describes JSON types for messages", () => {
    expect(describeType(null)).to.equal("null");
    expect(describeType([])).to.equal("array");
    expect(describeType({})).to.equal("object");
    expect(describeType(1)).to.equal("number");
    expect(describeType(undefined)).to.equal("undefined");
  });

  describe("parseAddress", () => {
    it("accepts any case and emits EIP-55", () => {
      expect(parseAddress(CHECKSUMMED.toLowerCase(), "a")).to.equal(CHECKSUMMED);
      expect(parseAddress("0x" + CHECKSUMMED.slice(2).toUpperCase(), "a")).to.equal(CHECKSUMMED);
      expect(parseAddress("0X" + CHECKSUMMED.slice(2), "a")).to.equal(CHECKSUMMED);
      // A mixed case that is not the checksum is still accepted (any case is accepted) and normalised.
      const wrongChecksum = "0x70997970c51812DC3A010C7D01B50E0D17DC79c8";
      expect(parseAddress(wrongChecksum, "a")).to.equal(CHECKSUMMED);
      expect(parseAddress("0x0000000000000000000000000000000000000000", "a")).to.equal(
        "0x0000000000000000000000000000000000000000",
      );
    });

    it("memoises checksums in a bounded cache and stays correct past the bound", () => {
      // Deterministic distinct addresses; the reference is ethers' getAddress, uncached.
      const address = (i: number) =>
        "0x" + (BigInt(i + 1) * 0x9e3779b97f4a7c15n).toString(16).padStart(40, "0");
      const count = ADDRESS_CHECKSUM_CACHE_ENTRIES + 500;
      for (let i = 0; i < count; i++) {
        const parsed = parseAddress(address(i), "a");
        if (i % 101 === 0) expect(parsed).to.equal(getAddress(address(i)));
      }
      expect(addressChecksumCacheSize()).to.equal(ADDRESS_CHECKSUM_CACHE_ENTRIES);
      // Evicted and retained entries both still give the checksum, in any input case.
      for (const i of [0, 1, count - 1]) {
        expect(parseAddress(address(i).toUpperCase().replace("0X", "0x"), "a")).to.equal(
          getAddress(address(i)),
        );
      }
    });

    const bad: [string, unknown, RegExp][] = [
      ["a number", 1, /got number/],
      ["null", null, /got null/],
      ["an object", {}, /got object/],
      ["empty", "", /20-byte/],
      ["no prefix", CHECKSUMMED.slice(2), /20-byte/],
      ["too short", CHECKSUMMED.slice(0, -1), /20-byte/],
      ["too long", CHECKSUMMED + "0", /20-byte/],
      ["non-hex", "0x" + "g".repeat(40), /20-byte/],
      ["padded", ` ${CHECKSUMMED}`, /20-byte/],
    ];
    for (const [label, value, reason] of bad) {
      it(`rejects ${label}`, () =>
        expectWireError(() => parseAddress(value, "claims.user_address"), "claims.user_address", reason));
    }
  });

  describe("parseUint256", () => {
    it("accepts decimal and hex, up to 2^256 − 1", () => {
      expect(parseUint256("1", "x")).to.equal(1n);
      expect(parseUint256("1000000000000000000", "x")).to.equal(10n ** 18n);
      expect(parseUint256("0xff", "x")).to.equal(255n);
      expect(parseUint256("0XFF", "x")).to.equal(255n);
      expect(parseUint256("0x" + "f".repeat(64), "x")).to.equal(MAX_UINT256);
      expect(parseUint256(MAX_UINT256.toString(), "x")).to.equal(MAX_UINT256);
      expect(parseUint256("0x" + "0".repeat(70) + "1", "x")).to.equal(1n);
    });

    it("accepts zero only when allowed", () => {
      expectWireError(() => parseUint256("0", "claims.amount"), "claims.amount", /greater than zero/);
      expectWireError(() => parseUint256("0x0", "claims.amount"), "claims.amount", /greater than zero/);
      expect(parseUint256("0", "claims.req_id", { allowZero: true })).to.equal(0n);
      expect(parseUint256("0x00", "claims.req_id", { allowZero: true })).to.equal(0n);
    });

    it("honours a custom maximum", () => {
      expect(parseUint256("10", "x", { max: 10n })).to.equal(10n);
      expectWireError(() => parseUint256("11", "x", { max: 10n }), "x", /at most 10/);
    });

    const bad: [string, unknown, RegExp][] = [
      ["a number (precision)", 5, /got number/],
      ["a bigint", 5n, /got bigint/],
      ["null", null, /got null/],
      ["an array", ["1"], /got array/],
      ["empty", "", /empty/],
      ["too long", "1".repeat(81), /too long/],
      ["2^256", (MAX_UINT256 + 1n).toString(), /at most/],
      ["2^256 in hex", "0x1" + "0".repeat(64), /at most/],
      ["negative", "-1", /unsigned/],
      ["a fraction", "1.5", /unsigned/],
      ["an exponent", "1e18", /unsigned/],
      ["a leading zero", "01", /unsigned/],
      ["whitespace", " 1", /unsigned/],
      ["bare 0x", "0x", /unsigned/],
      ["bad hex", "0xfg", /unsigned/],
      ["a plus sign", "+1", /unsigned/],
    ];
    for (const [label, value, reason] of bad) {
      it(`rejects ${label}`, () =>
        expectWireError(() => parseUint256(value, "claims.amount"), "claims.amount", reason));
    }
  });

  describe("parseSafeInteger / parseTimestamp", () => {
    it("accepts non-negative safe integers", () => {
      expect(parseSafeInteger(0, "n")).to.equal(0);
      expect(parseSafeInteger(100, "n", 100)).to.equal(100);
      expect(parseTimestamp(1_700_000_000, "claims.timestamp")).to.equal(1_700_000_000);
      expect(parseTimestamp(Number.MAX_SAFE_INTEGER, "t")).to.equal(Number.MAX_SAFE_INTEGER);
    });
    const bad: [string, unknown, RegExp][] = [
      ["a string", "1700000000", /got string/],
      ["null", null, /got null/],
      ["negative", -1, /non-negative/],
      ["a fraction", 1.5, /non-negative integer/],
      ["NaN", NaN, /non-negative integer/],
      ["Infinity", Infinity, /non-negative integer/],
      ["beyond 2^53", 2 ** 53, /non-negative integer/],
    ];
    for (const [label, value, reason] of bad) {
      it(`rejects ${label}`, () =>
        expectWireError(() => parseTimestamp(value, "claims.timestamp"), "claims.timestamp", reason));
    }
    it("rejects values above the maximum", () =>
      expectWireError(() => parseSafeInteger(101, "score", 100), "score", /at most 100/));
  });

  describe("parseVersion", () => {
    it("accepts 1, 2, '1', '2', 'v1', 'v2'", () => {
      expect(parseVersion(1, "v")).to.equal(1);
      expect(parseVersion("1", "v")).to.equal(1);
      expect(parseVersion("v1", "v")).to.equal(1);
      expect(parseVersion(2, "v")).to.equal(2);
      expect(parseVersion("2", "v")).to.equal(2);
      expect(parseVersion("v2", "v")).to.equal(2);
    });
    for (const value of [
      0,
      3,
      -1,
      1.5,
      "V1",
      "v3",
      "",
      " 1",
      "01",
      "1.0",
      null,
      undefined,
      true,
      [1],
      { v: 1 },
    ]) {
      it(`rejects ${JSON.stringify(value) ?? "undefined"}`, () =>
        expectWireError(() => parseVersion(value, "claims.version"), "claims.version", /must be 1 or 2/));
    }
  });

  describe("parseBytes32", () => {
    it("accepts 32 bytes and lower-cases them", () => {
      expect(parseBytes32("0x" + "AB".repeat(32), "h")).to.equal("0x" + "ab".repeat(32));
    });
    const bad: [string, unknown][] = [
      ["31 bytes", "0x" + "00".repeat(31)],
      ["33 bytes", "0x" + "00".repeat(33)],
      ["no prefix", "00".repeat(32)],
      ["non-hex", "0x" + "zz".repeat(32)],
      ["a number", 0],
      ["empty", ""],
    ];
    for (const [label, value] of bad) {
      it(`rejects ${label}`, () => expectWireError(() => parseBytes32(value, "p.job_hash"), "p.job_hash"));
    }
  });

  describe("parseHexBytes", () => {
    it("accepts whole bytes, empty included, and lower-cases them", () => {
      expect(parseHexBytes("0x", "b")).to.equal("0x");
      expect(parseHexBytes("0xABCD", "b")).to.equal("0xabcd");
      expect(parseHexBytes("0xabcd", "b", 2)).to.equal("0xabcd");
    });
    it("rejects odd length, wrong length, non-hex and non-strings", () => {
      expectWireError(() => parseHexBytes("0xabc", "sig"), "sig", /whole bytes/);
      expectWireError(() => parseHexBytes("0xabcd", "sig", 3), "sig", /must be 3 bytes, got 2/);
      expectWireError(() => parseHexBytes("abcd", "sig"), "sig", /0x-prefixed/);
      expectWireError(() => parseHexBytes("0xzz", "sig"), "sig", /whole bytes/);
      expectWireError(() => parseHexBytes(12, "sig"), "sig", /got number/);
    });
  });

  describe("parseString", () => {
    it("bounds the UTF-8 length, not the character count", () => {
      expect(parseString("é".repeat(512), "tag", 1024)).to.have.length(512);
      expectWireError(() => parseString("é".repeat(513), "tag", 1024), "tag", /at most 1024 bytes/);
      expect(parseString("", "tag")).to.equal("");
      expectWireError(() => parseString("x".repeat(1025), "tag"), "tag", /at most 1024 bytes/);
    });
    it("rejects non-strings", () => {
      expectWireError(() => parseString(1, "tag"), "tag", /got number/);
      expectWireError(() => parseString(null, "tag"), "tag", /got null/);
    });
  });

  describe("parseObject", () => {
    it("accepts plain objects only", () => {
      expect(parseObject({ a: 1 }, "body")).to.deep.equal({ a: 1 });
      expectWireError(() => parseObject(null, "body"), "body", /got null/);
      expectWireError(() => parseObject([], "body"), "body", /got array/);
      expectWireError(() => parseObject("{}", "body"), "body", /got string/);
      expectWireError(() => parseObject(undefined, "body"), "body", /got undefined/);
    });
  });

  describe("parseNetwork / formatNetwork", () => {
    it("round-trips CAIP-2 EVM networks", () => {
      expect(parseNetwork("eip155:31337", "network")).to.equal(31337);
      expect(parseNetwork(formatNetwork(8453n), "network")).to.equal(8453);
      expect(formatNetwork(1)).to.equal("eip155:1");
    });
    for (const value of [
      "eip155:0",
      "eip155:01",
      "eip155:",
      "cosmos:1",
      "EIP155:1",
      "eip155:1a",
      "eip155:" + "9".repeat(17),
      1,
      null,
    ]) {
      it(`rejects ${JSON.stringify(value)}`, () =>
        expectWireError(() => parseNetwork(value, "network"), "network"));
    }
    it("rejects chain ids beyond 2^53", () =>
      expectWireError(() => parseNetwork("eip155:9999999999999999", "network"), "network", /out of range/));
  });

  it("formats uints as decimal strings", () => {
    expect(formatUint(0n)).to.equal("0");
    expect(formatUint(MAX_UINT256)).to.equal(MAX_UINT256.toString(10));
  });

  it("compares addresses case-insensitively", () => {
    expect(sameAddress(CHECKSUMMED, CHECKSUMMED.toLowerCase())).to.be.true;
    expect(sameAddress(CHECKSUMMED, "0x0000000000000000000000000000000000000000")).to.be.false;
  });
});
