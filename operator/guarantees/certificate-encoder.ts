/**
 * The issuance hot path's certificate encoding: the same bytes as the sdk's
 * `encodeCertificateClaims` and `guaranteeId` (ARCHITECTURE.md §4–§5), written
 * word by word instead of through ethers' generic ABI coder, with the
 * certificate domain computed once. Profiling showed the generic coder (and
 * the checksum work it does per address) costing more per guarantee than the
 * BLS signature itself. test/operator/certificate-encoder.test.ts keeps both
 * encodings byte-identical.
 */
import { keccak_256 } from "@noble/hashes/sha3.js";
import type { GuaranteeClaims } from "../../sdk/claims";
import { certificateDomain, GUARANTEE_ID_TAG, type Deployment } from "../../sdk/ids";

const WORD = 32;
const CLAIM_HEAD_WORDS = 10;
const POLICY_HEAD_WORDS = 7;
const GUARANTEE_ID_WORDS = 5;

function writeWordHex(buffer: Buffer, word: number, hex: string): void {
  // `hex` without 0x, at most 64 digits, right-aligned (big-endian).
  const padded = hex.length % 2 === 0 ? hex : "0" + hex;
  buffer.write(padded, word * WORD + WORD - padded.length / 2, "hex");
}

function writeUint(buffer: Buffer, word: number, value: bigint | number): void {
  writeWordHex(buffer, word, value.toString(16));
}

function writeAddress(buffer: Buffer, word: number, address: string): void {
  writeWordHex(buffer, word, address.slice(2));
}

function writeBytes32(buffer: Buffer, word: number, value: string): void {
  buffer.write(value.slice(2), word * WORD, WORD, "hex");
}

function toHex(bytes: Uint8Array): string {
  return "0x" + Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("hex");
}

export class CertificateEncoder {
  /** `active_guarantee_domain_separator`, lower-case hex. */
  readonly domain: string;
  private readonly idPrefix: Buffer;

  constructor(deployment: Deployment) {
    this.domain = certificateDomain(deployment).toLowerCase();
    // abi.encode(GUARANTEE_ID_TAG, chainId, vault, user, reqId): the first three words never change.
    this.idPrefix = Buffer.alloc(GUARANTEE_ID_WORDS * WORD);
    writeBytes32(this.idPrefix, 0, GUARANTEE_ID_TAG);
    writeUint(this.idPrefix, 1, BigInt(deployment.chainId));
    writeAddress(this.idPrefix, 2, deployment.vault);
  }

  /** keccak256(abi.encode(GUARANTEE_ID_TAG, chainId, vault, user, reqId)), lower-case hex. */
  guaranteeId(user: string, reqId: bigint): string {
    const input = Buffer.from(this.idPrefix);
    writeAddress(input, 3, user);
    writeUint(input, 4, reqId);
    return toHex(keccak_256(input));
  }

  /** abi.encode of the certificate claims tuple (§5): the BLS message. */
  encode(claims: GuaranteeClaims, guaranteeId: string): Buffer {
    const policy = claims.version === 2 ? encodePolicy(claims) : Buffer.alloc(0);
    const buffer = Buffer.alloc((CLAIM_HEAD_WORDS + 1) * WORD + policy.length);
    writeUint(buffer, 0, claims.version);
    writeBytes32(buffer, 1, this.domain);
    writeBytes32(buffer, 2, guaranteeId);
    writeAddress(buffer, 3, claims.user);
    writeAddress(buffer, 4, claims.recipient);
    writeUint(buffer, 5, claims.reqId);
    writeUint(buffer, 6, claims.amount);
    writeAddress(buffer, 7, claims.asset);
    writeUint(buffer, 8, claims.timestamp);
    writeUint(buffer, 9, CLAIM_HEAD_WORDS * WORD); // offset of `policy`
    writeUint(buffer, 10, policy.length);
    policy.copy(buffer, (CLAIM_HEAD_WORDS + 1) * WORD);
    return buffer;
  }
}

/** abi.encode(registry, validator, agentId, minScore, jobHash, tag, deadline); already a multiple of 32 bytes. */
function encodePolicy(claims: Extract<GuaranteeClaims, { version: 2 }>): Buffer {
  const { policy } = claims;
  const tag = Buffer.from(policy.tag, "utf8");
  const tagWords = Math.ceil(tag.length / WORD);
  const buffer = Buffer.alloc((POLICY_HEAD_WORDS + 1 + tagWords) * WORD);
  writeAddress(buffer, 0, policy.registry);
  writeAddress(buffer, 1, policy.validator);
  writeUint(buffer, 2, policy.agentId);
  writeUint(buffer, 3, policy.minScore);
  writeBytes32(buffer, 4, policy.jobHash);
  writeUint(buffer, 5, POLICY_HEAD_WORDS * WORD); // offset of `tag`
  writeUint(buffer, 6, policy.deadline);
  writeUint(buffer, 7, tag.length);
  tag.copy(buffer, (POLICY_HEAD_WORDS + 1) * WORD);
  return buffer;
}
