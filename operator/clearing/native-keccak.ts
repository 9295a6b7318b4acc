/**
 * keccak256 for hashing millions of guarantees-root leaves (docs/clearing.md "Netting in the database"),
 * fastest first:
 * 1. `native`: the project's addon native/keccak-tree (built by `npm ci`): keccak256 of a buffer, plus
 *    the bulk routines of {@link Keccak256Fn} (a whole tree level per call, an in-place sort of the leaf
 *    hashes, a whole sum-tree level per call), ≈ 6× faster than (2) for a 1M-leaf root;
 * 2. `keccak`: the `keccak` package's native state (N-API prebuilds; its own pure-JS fallback when its
 *    addon does not load), reused for every hash, ≈ 3× faster per permutation than @noble/hashes;
 * 3. `noble`: @noble/hashes.
 * Each is checked against @noble/hashes at load (and the native bulk routines against their JavaScript
 * versions in sdk/compact-merkle.ts); any mismatch or missing piece falls to the next. All give the same
 * bytes (test/operator/native-keccak.test.ts).
 */
import { join } from "node:path";
import { PACKAGE_ROOT } from "../../runtime/package-root";
import createKeccak from "keccak";
import { type Keccak256Fn, hashPairs, nobleKeccak256, sortHashes } from "../../sdk/compact-merkle";
import { sumPairs } from "../../sdk/compact-sum-tree";
import { sameBytes, sampleBytes } from "../../sdk/keccak";

interface KeccakState {
  initialize(rate: number, capacity: number): void;
  absorb(data: Buffer): void;
  absorbLastFewBits(bits: number): void;
  squeeze(length: number): Buffer;
}

/** What native/keccak-tree exports (src/keccak_tree.c). */
interface KeccakTreeAddon {
  keccak256(data: Uint8Array): Buffer;
  hashPairs(src: Uint8Array, dst: Uint8Array, count: number, reversed: boolean): void;
  sortHashes(hashes: Uint8Array, count: number): void;
  sumPairs(src: Uint8Array, dst: Uint8Array, count: number): boolean;
}

export type KeccakBackend = "native" | "keccak" | "noble";

/** Where the addon lives (absent when `npm ci` ran with SURETY_SKIP_KECCAK_ADDON=1). */
export const NATIVE_KECCAK_ADDON = join(PACKAGE_ROOT, "native", "keccak-tree");

/** keccak256: rate 1088 bits, capacity 512, the original Keccak padding (delimited suffix 0x01). */
const RATE = 1088;
const CAPACITY = 512;
const KECCAK_SUFFIX = 0x01;

/** {@link sampleBytes} as a Buffer (the bulk routines take Buffers). */
function sample(length: number, seed: number): Buffer {
  const bytes = sampleBytes(length, seed);
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function hashMatchesNoble(hash: Keccak256Fn): boolean {
  for (const length of [0, 1, 64, 135, 136, 137, 192, 300]) {
    const data = sample(length, length + 1);
    if (!sameBytes(hash(data), nobleKeccak256(data))) return false;
  }
  return true;
}

/** The addon's routines checked against the JavaScript ones on a small sample; null when unusable. */
function fromAddon(addon: KeccakTreeAddon): Keccak256Fn | null {
  const hash = ((data: Uint8Array) => addon.keccak256(data)) as Keccak256Fn;
  if (!hashMatchesNoble(hash)) return null;
  hash.hashPairs = (src, dst, count, reversed) => addon.hashPairs(src, dst, count, reversed);
  hash.sortHashes = (hashes, count) => addon.sortHashes(hashes, count);
  const pairs = 33;
  const src = sample(pairs * 64, 7);
  for (const reversed of [false, true]) {
    const native = Buffer.alloc(pairs * 32);
    const js = Buffer.alloc(pairs * 32);
    hash.hashPairs(src, native, pairs, reversed);
    hashPairs(nobleKeccak256, src, js, pairs, reversed);
    if (!native.equals(js)) return null;
  }
  const leaves = sample(300 * 32, 11);
  leaves.copy(leaves, 32 * 5, 0, 32); // one duplicate hash
  if (!sortHashes(leaves, 300, false, hash).equals(sortHashes(leaves, 300))) return null;
  if (!sumPairsMatch(addon)) return null;
  hash.sumPairs = (src, dst, count) => addon.sumPairs(src, dst, count);
  return hash;
}

/** The addon's sum-tree level against the JavaScript one: sums with a carry across bytes, and an overflow. */
function sumPairsMatch(addon: KeccakTreeAddon): boolean {
  const pairs = 9;
  const src = sample(pairs * 128, 13);
  for (let k = 0; k < pairs; k++) src[k * 128 + 32] = src[k * 128 + 96] = 0x7f; // sums below 2^256
  const native = Buffer.alloc(pairs * 64);
  const js = Buffer.alloc(pairs * 64);
  if (
    !addon.sumPairs(src, native, pairs) ||
    !sumPairs(nobleKeccak256, src, js, pairs) ||
    !native.equals(js)
  ) {
    return false;
  }
  // In place, as the trees are built.
  const inPlace = Buffer.from(src);
  if (!addon.sumPairs(inPlace, inPlace, pairs) || !inPlace.subarray(0, pairs * 64).equals(js)) return false;
  const overflow = Buffer.alloc(128, 0xff);
  return (
    !addon.sumPairs(overflow, Buffer.alloc(64), 1) && !sumPairs(nobleKeccak256, overflow, Buffer.alloc(64), 1)
  );
}

function fromKeccakPackage(): Keccak256Fn | null {
  // The package exposes its state only through a hash object; one instance gives its class.
  const probe = createKeccak("keccak256") as unknown as { _state?: KeccakState };
  const State = probe._state?.constructor as (new () => KeccakState) | undefined;
  if (State === undefined) return null;
  const state = new State();
  const hash: Keccak256Fn = (data) => {
    state.initialize(RATE, CAPACITY);
    state.absorb(Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength));
    state.absorbLastFewBits(KECCAK_SUFFIX);
    return state.squeeze(32);
  };
  return hashMatchesNoble(hash) ? hash : null;
}

/**
 * The fastest working keccak256 (see the module comment). `addonPath` is the module to load the native
 * addon from (tests pass a missing one to get the fallback); `null` skips it.
 */
export function loadKeccak(addonPath: string | null = NATIVE_KECCAK_ADDON): {
  backend: KeccakBackend;
  keccak256: Keccak256Fn;
} {
  if (addonPath !== null) {
    try {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const native = fromAddon(require(addonPath) as KeccakTreeAddon);
      if (native !== null) return { backend: "native", keccak256: native };
    } catch {
      // not built (SURETY_SKIP_KECCAK_ADDON=1) or not loadable here: the next one
    }
  }
  try {
    const keccak = fromKeccakPackage();
    if (keccak !== null) return { backend: "keccak", keccak256: keccak };
  } catch {
    // the package failed to load: @noble/hashes
  }
  return { backend: "noble", keccak256: nobleKeccak256 };
}

const loaded = loadKeccak();

/** The fastest keccak256 available in this process (see the module comment). */
export const fastKeccak256: Keccak256Fn = loaded.keccak256;

/** Which implementation {@link fastKeccak256} is. */
export function keccakBackend(): KeccakBackend {
  return loaded.backend;
}
