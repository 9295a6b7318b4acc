/**
 * The CLI's sign-in to Core, kept between runs (docs/operator-auth.md). `login` signs in with SIWE and
 * stores the tokens in a session file only the user may read (0600; a directory it creates is 0700), one
 * session per Core URL. The read commands use the stored access token, refresh it when it runs out, and
 * store the rotated refresh token before using the new access token: Core revokes a whole session when a
 * spent refresh token comes back, so a refresh whose answer was not stored must never be retried.
 */
import { chmodSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { CliError } from "./context";

export interface StoredSession {
  /** The wallet signed in (EIP-55). */
  address: string;
  access_token: string;
  refresh_token: string;
  /** Unix seconds, on this machine's clock, when the access token expires. */
  access_token_expires_at: number;
  /** ISO 8601: when `login` signed in (refreshes keep it). */
  signed_in_at: string;
}

interface SessionFileContents {
  version: 1;
  /** Keyed by Core's base URL. */
  sessions: Record<string, StoredSession>;
}

const FILE_MODE = 0o600;
const DIR_MODE = 0o700;

/** The session file at `file`; reads and writes are whole-file (atomic rename). */
export class SessionStore {
  constructor(readonly file: string) {}

  /** The session stored for `coreUrl`, or null. */
  read(coreUrl: string): StoredSession | null {
    return this.contents().sessions[coreUrl] ?? null;
  }

  /** Stores (replaces) the session for `coreUrl`. */
  save(coreUrl: string, session: StoredSession): void {
    const contents = this.contents();
    contents.sessions[coreUrl] = session;
    this.write(contents);
  }

  /** Forgets the session for `coreUrl`; false when there was none. */
  remove(coreUrl: string): boolean {
    const contents = this.contents();
    if (!(coreUrl in contents.sessions)) return false;
    delete contents.sessions[coreUrl];
    this.write(contents);
    return true;
  }

  private contents(): SessionFileContents {
    let text: string;
    try {
      text = readFileSync(this.file, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return { version: 1, sessions: {} };
      throw new CliError(`session file ${this.file}: ${(error as Error).message}`);
    }
    if ((statSync(this.file).mode & 0o077) !== 0) {
      process.stderr.write(
        `warning: session file ${this.file} is readable by others; it holds bearer tokens (chmod 600 it)\n`,
      );
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      throw new CliError(`session file ${this.file}: not JSON (${(error as Error).message}); delete it`);
    }
    const contents = parsed as Partial<SessionFileContents> | null;
    if (
      typeof contents !== "object" ||
      contents === null ||
      contents.version !== 1 ||
      typeof contents.sessions !== "object" ||
      contents.sessions === null
    ) {
      throw new CliError(`session file ${this.file}: not a session file of this CLI; delete it`);
    }
    for (const [url, session] of Object.entries(contents.sessions)) {
      if (!isStoredSession(session)) {
        throw new CliError(`session file ${this.file}: the session for ${url} is malformed; delete it`);
      }
    }
    return contents as SessionFileContents;
  }

  private write(contents: SessionFileContents): void {
    const dir = path.dirname(this.file);
    mkdirSync(dir, { recursive: true, mode: DIR_MODE });
    // Created 0600 from the start (never world-readable, whatever the umask), then renamed over the old one.
    const temporary = path.join(dir, `.${path.basename(this.file)}.${randomBytes(6).toString("hex")}.tmp`);
    try {
      writeFileSync(temporary, JSON.stringify(contents, null, 2) + "\n", { mode: FILE_MODE, flag: "wx" });
      chmodSync(temporary, FILE_MODE);
      renameSync(temporary, this.file);
    } catch (error) {
      rmSync(temporary, { force: true });
      throw new CliError(`session file ${this.file}: cannot write: ${(error as Error).message}`);
    }
  }
}

function isStoredSession(value: unknown): value is StoredSession {
  const s = value as Partial<StoredSession> | null;
  return (
    typeof s === "object" &&
    s !== null &&
    typeof s.address === "string" &&
    typeof s.access_token === "string" &&
    typeof s.refresh_token === "string" &&
    typeof s.access_token_expires_at === "number" &&
    typeof s.signed_in_at === "string"
  );
}
