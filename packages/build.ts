/**
 * Builds the publishable packages of packages/ from the sources where they live (docs/architecture.md,
 * "Packages"): nothing is copied into packages/ by hand, each package's `dist/` is generated.
 *
 *   @surety/sdk     sdk/*.ts (the pure protocol)                    → packages/sdk/dist/
 *   @surety/x402    sdk/kits/** (x402 scheme, paywall, webhooks)     → packages/x402/dist/
 *   @surety/devnet  packages/devnet/src + what it runs: scripts/devnet.ts, Core, facilitator
 *                                                                    → packages/devnet/dist/
 *
 * Each is CommonJS with `.d.ts`, plus an ES module wrapper (`.mjs` re-exporting the CommonJS module, and
 * its `.d.mts`) for the `import` condition: one instance of every class whichever way a module is
 * loaded. The kits import the protocol by relative paths (`../../x402`); in @surety/x402 those become
 * imports of @surety/sdk (`@surety/sdk/x402`), so the protocol has one copy in an integrator's app.
 *
 *   npm run packages:build            compiles the three packages
 *   npm run packages:pack -- <dir>    compiles, then `npm pack`s each into <dir> (default packages/.packed)
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import ts from "typescript";

const ROOT = path.resolve(__dirname, "..");
const SDK_ROOT = path.join(ROOT, "sdk");
const KITS_ROOT = path.join(SDK_ROOT, "kits");

export const PACKAGES = {
  sdk: { name: "@surety/sdk", dir: path.join(ROOT, "packages", "sdk") },
  x402: { name: "@surety/x402", dir: path.join(ROOT, "packages", "x402") },
  devnet: { name: "@surety/devnet", dir: path.join(ROOT, "packages", "devnet") },
} as const;
export type PackageKey = keyof typeof PACKAGES;

/** Entry points of each package that get an ES module wrapper (paths inside its dist/, no extension). */
const ENTRY_POINTS: Record<PackageKey, readonly string[] | "every-module"> = {
  sdk: "every-module", // `@surety/sdk` and `@surety/sdk/<module>`
  x402: [
    "x402-scheme/index",
    "x402-scheme/sqlite-ledger",
    "x402-scheme/facilitator-client",
    "paywall/index",
    "webhook-receiver",
  ],
  devnet: ["index"],
};

/** The sources of @surety/devnet besides its own: the entry points it starts as processes. */
const DEVNET_ENTRY_POINTS = [
  "packages/devnet/src/index.ts",
  "scripts/devnet.ts",
  "scripts/devnet/node.config.ts",
  "scripts/devnet/postgres.ts",
  "scripts/devnet/exact-facilitator.ts",
  "operator/main.ts",
  "facilitator/main.ts",
];

function fail(diagnostics: readonly ts.Diagnostic[]): never {
  const host: ts.FormatDiagnosticsHost = {
    getCanonicalFileName: (file) => file,
    getCurrentDirectory: () => ROOT,
    getNewLine: () => "\n",
  };
  throw new Error(`TypeScript:\n${ts.formatDiagnosticsWithColorAndContext(diagnostics, host)}`);
}

/** The project's compiler options (tsconfig.json), for a CommonJS build with declarations. */
function compilerOptions(rootDir: string): ts.CompilerOptions {
  const file = ts.readConfigFile(path.join(ROOT, "tsconfig.json"), (name) => ts.sys.readFile(name));
  if (file.error) fail([file.error]);
  const parsed = ts.parseJsonConfigFileContent(file.config, ts.sys, ROOT);
  return {
    ...parsed.options,
    rootDir,
    // A virtual directory: writeFile below puts every output where its package wants it.
    outDir: path.join(ROOT, "packages", ".out"),
    declaration: true,
    declarationMap: false,
    sourceMap: false,
    noEmitOnError: true,
    types: ["node"],
  };
}

/** Compiles `rootNames` (and what they import); `place` maps each output below rootDir to a file, or null. */
function compile(
  rootNames: string[],
  rootDir: string,
  place: (relative: string, text: string) => { file: string; text: string } | null,
): void {
  const options = compilerOptions(rootDir);
  const program = ts.createProgram({ rootNames, options });
  const diagnostics = ts.getPreEmitDiagnostics(program);
  if (diagnostics.length > 0) fail(diagnostics);
  const result = program.emit(undefined, (fileName, text) => {
    const relative = path.relative(options.outDir!, fileName);
    const target = place(relative, text);
    if (target === null) return;
    mkdirSync(path.dirname(target.file), { recursive: true });
    writeFileSync(target.file, target.text);
  });
  if (result.emitSkipped || result.diagnostics.length > 0) fail(result.diagnostics);
}

/** Every `require("…")`, `from "…"` and `import("…")` specifier in emitted JavaScript or declarations. */
const SPECIFIER = /(\brequire\(|\bfrom\s+|\bimport\()(["'])([^"']+)\2/g;

/**
 * A kit's imports of the protocol (relative paths leaving sdk/kits/) as imports of @surety/sdk; imports
 * between kits stay relative. `from`: the emitted file's path below sdk/.
 */
export function sdkImportsAsPackage(text: string, from: string): string {
  return text.replace(SPECIFIER, (whole, opening: string, quote: string, specifier: string) => {
    if (!specifier.startsWith(".")) return whole;
    const target = path.posix.normalize(path.posix.join(path.posix.dirname(from), specifier));
    if (target === "kits" || target.startsWith("kits/")) return whole;
    if (target.startsWith("..")) throw new Error(`${from}: ${specifier} leaves sdk/`);
    const subpath = target === "index" ? "" : `/${target}`;
    return `${opening}${quote}${PACKAGES.sdk.name}${subpath}${quote}`;
  });
}

function cleanDist(key: PackageKey): string {
  const dist = path.join(PACKAGES[key].dir, "dist");
  rmSync(dist, { recursive: true, force: true });
  return dist;
}

/** `<entry>.mjs` and `<entry>.d.mts` next to `<entry>.js`: the ES module face of a CommonJS module. */
function writeEsmWrappers(dist: string, entries: readonly string[]): void {
  for (const entry of entries) {
    const base = `./${path.posix.basename(entry)}.js`;
    const note = "// The ES module face of the CommonJS module next to it (one instance either way).\n";
    writeFileSync(path.join(dist, `${entry}.mjs`), `${note}export * from "${base}";\n`);
    writeFileSync(path.join(dist, `${entry}.d.mts`), `${note}export * from "${base}";\n`);
  }
}

function sdkModules(): string[] {
  return readdirSync(SDK_ROOT)
    .filter((name) => name.endsWith(".ts") && !name.endsWith(".d.ts"))
    .map((name) => name.slice(0, -".ts".length));
}

function kitSources(dir: string = KITS_ROOT): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) return kitSources(file);
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts") ? [file] : [];
  });
}

/** @surety/sdk and @surety/x402: one compilation of sdk/, split between the two packages. */
export function buildSdkAndX402(): void {
  const sdkDist = cleanDist("sdk");
  const x402Dist = cleanDist("x402");
  const modules = sdkModules();
  const rootNames = [...modules.map((name) => path.join(SDK_ROOT, `${name}.ts`)), ...kitSources()];
  compile(rootNames, SDK_ROOT, (relative, text) => {
    const posix = relative.split(path.sep).join("/");
    if (posix.startsWith("kits/")) {
      return {
        file: path.join(x402Dist, posix.slice("kits/".length)),
        text: sdkImportsAsPackage(text, posix),
      };
    }
    return { file: path.join(sdkDist, posix), text };
  });
  writeEsmWrappers(sdkDist, modules);
  writeEsmWrappers(x402Dist, ENTRY_POINTS.x402 as readonly string[]);
}

/**
 * @surety/devnet: its own sources and everything `npm run devnet` runs (scripts/devnet.ts, Core, the
 * facilitator, the contracts' typechain factories), compiled with the repository's layout under dist/,
 * so the same code finds the same files relative to itself.
 */
export function buildDevnet(): void {
  const dist = cleanDist("devnet");
  // The project's ambient declarations: modules without types (operator/types) and the Hardhat runtime's
  // plugin extensions (`hre.ethers`, loaded by hardhat.config.ts, which is type-checked, not shipped; nor is
  // the test support it loads, test/support/snapshot-clock.ts).
  const ambient = [
    ...readdirSync(path.join(ROOT, "operator", "types")).map((name) => path.join("operator", "types", name)),
    "hardhat.config.ts",
  ];
  compile(
    [...DEVNET_ENTRY_POINTS, ...ambient].map((file) => path.join(ROOT, file)),
    ROOT,
    (relative, text) =>
      relative.startsWith("hardhat.config.") || relative.startsWith(`test${path.sep}`)
        ? null
        : { file: path.join(dist, relative), text },
  );
  // dist/index.js: the package's entry, in front of dist/packages/devnet/src/index.js.
  const inner = "./packages/devnet/src/index.js";
  writeFileSync(path.join(dist, "index.js"), `"use strict";\nmodule.exports = require("${inner}");\n`);
  writeFileSync(path.join(dist, "index.d.ts"), `export * from "${inner}";\n`);
  writeEsmWrappers(dist, ENTRY_POINTS.devnet as readonly string[]);
}

export function buildPackages(keys: readonly PackageKey[] = ["sdk", "x402", "devnet"]): void {
  if (keys.includes("sdk") || keys.includes("x402")) buildSdkAndX402();
  if (keys.includes("devnet")) buildDevnet();
}

/** `npm pack`s the built packages into `destination`; returns the tarballs' paths, in PACKAGES' order. */
export function packPackages(
  destination: string,
  keys: readonly PackageKey[] = ["sdk", "x402", "devnet"],
): Record<PackageKey, string> {
  mkdirSync(destination, { recursive: true });
  const tarballs = {} as Record<PackageKey, string>;
  for (const key of keys) {
    const output = execFileSync(
      "npm",
      ["pack", PACKAGES[key].dir, "--pack-destination", destination, "--json", "--ignore-scripts"],
      { cwd: ROOT, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] },
    );
    const [packed] = JSON.parse(output) as { filename: string }[];
    tarballs[key] = path.join(destination, packed.filename);
  }
  return tarballs;
}

if (require.main === module) {
  const [command, destination] = process.argv.slice(2);
  const started = Date.now();
  buildPackages();
  console.log(
    `built ${Object.values(PACKAGES)
      .map((p) => p.name)
      .join(", ")} in ${Date.now() - started} ms`,
  );
  if (command === "pack") {
    const tarballs = packPackages(path.resolve(destination ?? path.join(ROOT, "packages", ".packed")));
    for (const tarball of Object.values(tarballs)) console.log(tarball);
  }
}
