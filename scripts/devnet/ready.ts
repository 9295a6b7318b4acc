/**
 * The devnet's ready line, `[devnet] devnet ready: rpc=… core=… facilitator=… console=… (12.3 s)`: what
 * scripts/devnet.ts prints once every service answers, and what tools that start it wait for
 * (@surety/devnet's `startDevnet`, the tests).
 */

/** The text of the line tools wait for. */
export const READY_MARKER = "devnet ready:";

/** The `name=value` fields of a ready line (`rpc`, `core`, `facilitator`, `console`, …), or null for another line. */
export function parseReadyLine(line: string): Record<string, string> | null {
  const at = line.indexOf(READY_MARKER);
  if (at < 0) return null;
  const fields: Record<string, string> = {};
  for (const match of line.slice(at + READY_MARKER.length).matchAll(/([a-z][a-z0-9_-]*)=(\S+)/gi)) {
    fields[match[1]] = match[2];
  }
  return fields;
}
