/** Structured JSON logs (pino). Never log request bodies or headers: they carry tokens and signatures. */
import pino, { type DestinationStream, type Logger } from "pino";
import type { LogLevel } from "./config";

export type { Logger };

export function createLogger(level: LogLevel = "info", destination?: DestinationStream): Logger {
  const options = { level, base: { service: "surety-core" }, timestamp: pino.stdTimeFunctions.isoTime };
  return destination ? pino(options, destination) : pino(options);
}

/** A logger that drops everything (tests). */
export function silentLogger(): Logger {
  return pino({ level: "silent" });
}
