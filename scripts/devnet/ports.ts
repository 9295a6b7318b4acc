/**
 * TCP port checks for the devnet: is a port free, and if not, which process
 * holds it (best effort, through `ss` or `lsof`, then /proc for its command
 * line) so the message can say what to stop.
 */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer } from "node:net";

export interface PortOwner {
  pid: number;
  /** The process's command line, when readable. */
  command: string | null;
}

/** True when nothing listens on host:port (we can bind it ourselves). */
export function isPortFree(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

function run(command: string, args: string[]): Promise<string> {
  return new Promise((resolve) => {
    execFile(command, args, { timeout: 3_000 }, (error, stdout) => resolve(error ? "" : stdout));
  });
}

function commandLine(pid: number): string | null {
  try {
    const raw = readFileSync(`/proc/${pid}/cmdline`, "utf8");
    return raw.split("\0").filter(Boolean).join(" ") || null;
  } catch {
    return null;
  }
}

/** The process listening on `port`, or null when it cannot be told (no ss/lsof, or another user's process). */
export async function portOwner(port: number): Promise<PortOwner | null> {
  const ss = await run("ss", ["-ltnpH", `sport = :${port}`]);
  let pid = Number(/pid=(\d+)/.exec(ss)?.[1] ?? NaN);
  if (!Number.isSafeInteger(pid)) {
    const lsof = await run("lsof", ["-nP", `-iTCP:${port}`, "-sTCP:LISTEN", "-t"]);
    pid = Number(lsof.trim().split("\n")[0] || NaN);
  }
  if (!Number.isSafeInteger(pid) || pid <= 0) return null;
  return { pid, command: commandLine(pid) };
}

/** Waits until `port` is free or `timeoutMs` passes; returns whether it is free. */
export async function waitForPortFree(host: string, port: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await isPortFree(host, port)) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
