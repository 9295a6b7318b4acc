/**
 * The Chromium the browser tests drive with playwright-core: the system's (Debian's `/usr/bin/chromium`,
 * or the path in `SURETY_CHROMIUM`) when it is there, else the build the npm package `@sparticuz/chromium`
 * ships inside its tarball (installed by `npm ci`, nothing downloaded at run time; unpacked on first use
 * into the OS temp dir, `$TMPDIR/chromium`, and reused from there). So `npm ci && npm test` needs no apt
 * step. `SURETY_CHROMIUM=bundled` skips the system browser (how the fallback is tested on a machine that
 * has one); a `SURETY_CHROMIUM` path that does not exist falls back the same way.
 *
 * The bundled build links the system's NSS (`libnss3`, `libnspr4`), which a machine without Debian's
 * Chromium may lack: then the copies the package ships for Amazon Linux (`bin/al2023.tar.br`) are unpacked
 * next to it and put on the browser's `LD_LIBRARY_PATH` (`SURETY_CHROMIUM_LIBS=bundled` forces that).
 */
import { accessSync, constants, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { brotliDecompressSync } from "node:zlib";

/** Where Debian's package puts it. */
export const SYSTEM_CHROMIUM = "/usr/bin/chromium";
/** Environment variable naming another system browser, or `bundled`. */
export const CHROMIUM_ENV = "SURETY_CHROMIUM";

/**
 * Flags for any of them here: no sandbox (CI runs as root), no GPU, and none of Chromium's own background
 * connections (the network is closed; they fail at every start).
 */
const COMMON_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export interface ChromiumLaunch {
  executablePath: string;
  args: string[];
  /** Environment of the browser process (the bundled NSS on `LD_LIBRARY_PATH` when the system has none). */
  env?: Record<string, string>;
  /** What was found, for messages: `system (/usr/bin/chromium)` or `@sparticuz/chromium 143.0.4`. */
  source: string;
}

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The browser to launch; throws naming both places when neither is usable. */
export async function resolveChromium(): Promise<ChromiumLaunch> {
  const wanted = process.env[CHROMIUM_ENV];
  const systemPath = wanted === undefined || wanted === "" ? SYSTEM_CHROMIUM : wanted;
  if (wanted !== "bundled" && executable(systemPath)) {
    return { executablePath: systemPath, args: COMMON_ARGS, source: `system (${systemPath})` };
  }
  let bundled: typeof import("@sparticuz/chromium").default;
  let version: string;
  let root: string;
  try {
    bundled = (await import("@sparticuz/chromium")).default;
    // Its `exports` hide package.json: read it next to the entry point (build/cjs/index.cjs).
    root = path.resolve(path.dirname(require.resolve("@sparticuz/chromium")), "../..");
    version = (JSON.parse(readFileSync(path.join(root, "package.json"), "utf8")) as { version: string })
      .version;
  } catch (error) {
    throw new Error(
      `no Chromium: ${systemPath} is missing and @sparticuz/chromium cannot be loaded (run npm ci): ${(error as Error).message}`,
    );
  }
  bundled.setGraphicsMode = false; // no WebGL needed: skips unpacking SwiftShader's GL
  const executablePath = await bundled.executablePath();
  // Its flags are made for this build (headless shell, single process, no zygote); ours keep it offline.
  const args = [...new Set([...bundled.args, ...COMMON_ARGS])];
  const launch: ChromiumLaunch = {
    executablePath,
    args,
    source: `@sparticuz/chromium ${version} (${executablePath})`,
  };
  if (process.env.SURETY_CHROMIUM_LIBS === "bundled" || !systemHasNss()) {
    const libs = unpackBundledLibs(path.join(root, "bin", "al2023.tar.br"));
    const inherited = process.env.LD_LIBRARY_PATH;
    launch.env = {
      ...(process.env as Record<string, string>),
      LD_LIBRARY_PATH: inherited ? `${libs}:${inherited}` : libs,
    };
    launch.source += `, NSS from the package (${libs})`;
  }
  return launch;
}

const LIBRARY_DIRS = [
  "/lib/x86_64-linux-gnu",
  "/usr/lib/x86_64-linux-gnu",
  "/lib64",
  "/usr/lib64",
  "/usr/lib",
];

function systemHasNss(): boolean {
  return ["libnss3.so", "libnspr4.so"].every((lib) =>
    LIBRARY_DIRS.some((dir) => existsSync(path.join(dir, lib))),
  );
}

/** Unpacks the package's brotli-compressed tar of shared libraries (regular files only) once; its `lib/` dir. */
function unpackBundledLibs(archive: string): string {
  const target = path.join(tmpdir(), "surety-chromium-libs");
  const lib = path.join(target, "lib");
  if (existsSync(path.join(lib, "libnss3.so"))) return lib;
  const tar = brotliDecompressSync(readFileSync(archive));
  for (let offset = 0; offset + 512 <= tar.length; ) {
    const name = tar
      .subarray(offset, offset + 100)
      .toString("utf8")
      .replace(/\0.*$/s, "");
    if (name === "") break;
    const size = parseInt(
      tar
        .subarray(offset + 124, offset + 136)
        .toString("utf8")
        .trim() || "0",
      8,
    );
    const type = String.fromCharCode(tar[offset + 156]);
    const body = tar.subarray(offset + 512, offset + 512 + size);
    if ((type === "0" || type === "\0") && !name.includes("..")) {
      const file = path.join(target, name);
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, body, { mode: 0o755 });
    }
    offset += 512 + Math.ceil(size / 512) * 512;
  }
  return lib;
}
