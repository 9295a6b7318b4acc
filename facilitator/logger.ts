/** Structured JSON logs (pino). Never log request bodies or headers: they carry signatures and tokens. */
import pino, { type DestinationStream, type Logger } from "pino";
import type { FacilitatorLogLevel } from "./config";

export type { Logger };

export function createFacilitatorLogger(
  level: FacilitatorLogLevel = "info",
  destination?: DestinationStream,
): Logger {
  const options = {
    level,
    base: { service: "surety-facilitator" },
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  return destination ? pino(options, destination) : pino(options);
}

/** A logger that drops everything (tests). */
export function silentFacilitatorLogger(): Logger {
  return pino({ level: "silent" });
}
