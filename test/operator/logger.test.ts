import { expect } from "chai";
import { spawnSync } from "node:child_process";
import { join } from "node:path";

/** Runs `body` in a fresh Node process with `createLogger` in scope; returns its stdout lines. */
function runLogger(body: string): { lines: Record<string, unknown>[]; status: number | null } {
  const logger = join(__dirname, "..", "..", "operator", "logger.ts");
  const script = `const { createLogger } = require(${JSON.stringify(logger)});\n${body}`;
  const child = spawnSync(process.execPath, ["-r", "ts-node/register/transpile-only", "-e", script], {
    encoding: "utf8",
    timeout: 60_000,
  });
  const lines = child.stdout
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  return { lines, status: child.status };
}

describe("Core's logger (operator/logger.ts): pino's asynchronous destination", () => {
  it("writes every line, structured, when the process exits at once after logging", () => {
    const { lines, status } = runLogger(`
      const log = createLogger("info");
      for (let i = 0; i < 2000; i++) log.info({ req_id: "r" + i, status: 200 }, "request");
      log.error({ task: "t" }, "background task failed");
      process.exit(3);
    `);
    expect(status).to.equal(3);
    expect(lines).to.have.length(2001);
    expect(lines[0]).to.include({
      service: "surety-core",
      level: 30,
      msg: "request",
      req_id: "r0",
      status: 200,
    });
    expect(lines[1999]).to.include({ req_id: "r1999" });
    expect(lines[2000]).to.include({ level: 50, msg: "background task failed", task: "t" });
    expect(lines[2000].time).to.match(/^\d{4}-\d\d-\d\dT/);
  });

  it("writes the lines logged before an uncaught error ends the process", () => {
    const { lines, status } = runLogger(`
      const log = createLogger("info");
      log.info("Core listening");
      log.fatal({ reason: "x" }, "refusing");
      setImmediate(() => { throw new Error("boom"); });
    `);
    expect(status).to.not.equal(0);
    // Both written; not necessarily in order: a write already handed to libuv's thread pool can land after the
    // exit handler's synchronous flush of the rest (seen once on a loaded host). `time` keeps the real order.
    expect(lines.map((line) => line.msg)).to.have.members(["Core listening", "refusing"]);
    expect(lines).to.have.length(2);
  });

  it("keeps the level: below it nothing is written", () => {
    const { lines } = runLogger(`
      const log = createLogger("warn");
      log.info("request");
      log.warn("slow");
    `);
    expect(lines.map((line) => line.msg)).to.deep.equal(["slow"]);
  });
});
