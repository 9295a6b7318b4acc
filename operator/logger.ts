/** Structured JSON logs (pino). Never log request bodies or headers: they carry tokens and signatures. */
import pino, { type DestinationStream, type Logger } from "pino";
import type { LogLevel } from "./config";

export type { Logger };

/**
 * Core's logger. Without a `destination`, lines go to stdout through pino's asynchronous destination
 * (`pino.destination({ sync: false })`, pino's recommended set-up for throughput): a line is queued and
 * written by the event loop, lines written while a write is in flight go out together, and pino writes
 * what is queued synchronously when the process exits (also on an uncaught error). Only a process killed
 * outright (SIGKILL, out of memory) can lose its last lines (docs/devnet.md, "Service logs"). At such an
 * exit a write already under way can land after the final synchronous flush: the last lines may come out of
 * order (their `time` orders them).
 */
export function createLogger(level: LogLevel = "info", destination?: DestinationStream): Logger {
  const options = { level, base: { service: "surety-core" }, timestamp: pino.stdTimeFunctions.isoTime };
  return pino(options, destination ?? pino.destination({ dest: 1, sync: false }));
}

/** A logger that drops everything (tests). */
export function silentLogger(): Logger {
  return pino({ level: "silent" });
}
