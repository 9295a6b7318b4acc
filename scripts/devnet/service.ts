/**
 * One devnet service as a child process in its own process group, so that
 * stopping it stops everything it may have spawned. Its output goes to a log
 * file (and, when asked, to this terminal with a name prefix).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createWriteStream, readFileSync, type WriteStream } from "node:fs";
import { createInterface } from "node:readline";

export interface ServiceSpec {
  /** Short name used in messages and as the output prefix (`chain`, `core`, `facilitator`). */
  name: string;
  command: string;
  args: readonly string[];
  env: NodeJS.ProcessEnv;
  cwd: string;
  logFile: string;
  /** Echo the output on this terminal too. */
  echo: boolean;
}

export interface ServiceExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** How long a service gets to stop after SIGTERM before its group is killed. */
export const STOP_GRACE_MS = 10_000;

export class ServiceProcess {
  readonly name: string;
  readonly pid: number;
  readonly logFile: string;
  /** Resolves when the process has exited and its output is drained (never rejects). */
  readonly exited: Promise<ServiceExit>;
  private exit: ServiceExit | null = null;
  private readonly child: ChildProcess;
  private readonly log: WriteStream;

  private constructor(spec: ServiceSpec) {
    this.name = spec.name;
    this.logFile = spec.logFile;
    this.log = createWriteStream(spec.logFile, { flags: "a" });
    // detached: the child leads a new process group (pgid = its pid), and a Ctrl-C on the terminal reaches
    // only this script, which then stops the services in order.
    this.child = spawn(spec.command, [...spec.args], {
      cwd: spec.cwd,
      env: spec.env,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    if (this.child.pid === undefined) throw new Error(`${spec.name}: could not start ${spec.command}`);
    this.pid = this.child.pid;
    for (const stream of [this.child.stdout, this.child.stderr]) {
      if (!stream) continue;
      stream.pipe(this.log, { end: false });
      if (spec.echo) {
        createInterface({ input: stream }).on("line", (line) =>
          process.stdout.write(`${spec.name} | ${line}\n`),
        );
      }
    }
    this.exited = new Promise((resolve) => {
      // "close", not "exit": the output streams are drained by then, so the log file is complete.
      this.child.once("close", (code, signal) => {
        this.exit = { code, signal };
        resolve(this.exit);
      });
      this.child.once("error", () => {
        this.exit ??= { code: null, signal: null };
        resolve(this.exit);
      });
    });
  }

  static start(spec: ServiceSpec): ServiceProcess {
    return new ServiceProcess(spec);
  }

  get running(): boolean {
    return this.exit === null;
  }

  /** Human description of how it ended, e.g. `exited with code 1`. */
  describeExit(): string {
    if (this.exit === null) return "running";
    if (this.exit.signal) return `killed by ${this.exit.signal}`;
    return `exited with code ${this.exit.code}`;
  }

  /** SIGTERM to the whole group; SIGKILL to the group if it is still there after `graceMs`. */
  async stop(graceMs = STOP_GRACE_MS): Promise<void> {
    if (this.running) {
      this.signalGroup("SIGTERM");
      const timer = new Promise<"timeout">((resolve) =>
        setTimeout(() => resolve("timeout"), graceMs).unref(),
      );
      if ((await Promise.race([this.exited, timer])) === "timeout") this.signalGroup("SIGKILL");
      await this.exited;
    }
    // Whatever the leader left behind in its group goes too.
    this.signalGroup("SIGKILL");
    await new Promise<void>((resolve) => this.log.end(resolve));
  }

  /** Immediate SIGKILL to the group (second Ctrl-C, or this script is dying). */
  kill(): void {
    this.signalGroup("SIGKILL");
  }

  /** The last `lines` lines of the log file (to show why a service failed). */
  tail(lines = 15): string {
    try {
      return readFileSync(this.logFile, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
    } catch {
      return "(no output)";
    }
  }

  private signalGroup(signal: NodeJS.Signals): void {
    try {
      process.kill(-this.pid, signal);
    } catch {
      // ESRCH: the group is gone already.
    }
  }
}
