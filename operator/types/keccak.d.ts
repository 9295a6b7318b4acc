/** The parts of the `keccak` package (native keccak, N-API prebuilds) that operator/clearing/native-keccak.ts uses. */
declare module "keccak" {
  interface KeccakHash {
    update(data: Buffer): KeccakHash;
    digest(): Buffer;
  }
  function createKeccak(algorithm: "keccak256"): KeccakHash;
  export = createKeccak;
}
