/**
 * The directory of this package's `package.json`: the repository's root, whether this code runs from its
 * TypeScript sources (ts-node) or compiled to `dist/` (`npm run operator:build`, docs/scale-out.md "Running Core compiled"). The
 * native addons (`native/`, built by `npm ci`) and built assets (`console/dist/`) live there, never next
 * to the compiled files, so paths to them are taken from here rather than from `__dirname`.
 */
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";

/** The nearest directory at or above `from` that holds a `package.json`. */
export function packageRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, "package.json"))) return dir;
    if (dirname(dir) === dir) throw new Error(`no package.json at or above ${from}`);
  }
}

/** This package's root (runtime/ is one level below it in the sources, two in `dist/`). */
export const PACKAGE_ROOT = packageRoot(__dirname);
