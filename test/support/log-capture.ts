/**
 * A pino logger whose lines are kept in memory (parsed), for tests that
 * assert what a service logs: e.g. that a client's bad request writes no
 * error-level line and no stack trace.
 */
import pino, { type Logger } from "pino";

/** pino's numeric level of `error`; `fatal` is above it. */
export const PINO_ERROR_LEVEL = 50;

export interface LogLine {
  level: number;
  msg?: string;
  [field: string]: unknown;
}

export interface LogCapture {
  logger: Logger;
  lines: LogLine[];
  /** Lines at error level or above. */
  errors(): LogLine[];
  clear(): void;
}

/** Captures everything from `level` up (default debug, so client-error lines are seen too). */
export function captureLogs(level: pino.Level = "debug"): LogCapture {
  const lines: LogLine[] = [];
  const logger = pino({ level }, { write: (line: string) => void lines.push(JSON.parse(line) as LogLine) });
  return {
    logger,
    lines,
    errors: () => lines.filter((line) => line.level >= PINO_ERROR_LEVEL),
    clear: () => void lines.splice(0),
  };
}
