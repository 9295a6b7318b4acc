/** Writes test/vectors/sdk-vectors.json from scripts/vectors.ts (`npm run vectors`). */
import { writeFileSync } from "node:fs";
import { VECTORS_PATH, buildVectors } from "./vectors";

async function main(): Promise<void> {
  const vectors = await buildVectors();
  writeFileSync(VECTORS_PATH, JSON.stringify(vectors, null, 2) + "\n");
  console.log(`wrote ${vectors.guarantees.length} guarantee vectors to ${VECTORS_PATH}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
