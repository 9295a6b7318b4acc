/**
 * Hypervisor steal: CPU time this VM's vCPUs were ready to run but the host
 * ran something else (`steal` in /proc/stat). On a shared 2-core VM it is
 * what most separates a good run from a bad one (docs/benchmarks.md), so the
 * benches print it next to each phase. Linux only; null elsewhere.
 */
import { readFileSync } from "node:fs";

interface CpuTimes {
  steal: number;
  total: number;
}

/** The aggregate `cpu` line: user nice system idle iowait irq softirq steal (guest time is inside user). */
function readCpuTimes(): CpuTimes | null {
  try {
    const fields = readFileSync("/proc/stat", "utf8").split("\n", 1)[0].trim().split(/\s+/);
    if (fields[0] !== "cpu" || fields.length < 9) return null;
    const ticks = fields.slice(1, 9).map(Number);
    return { steal: ticks[7], total: ticks.reduce((sum, t) => sum + t, 0) };
  } catch {
    return null;
  }
}

/** Starts measuring; the returned function gives the steal since then, in % of the VM's CPU time (or null). */
export function stealMeter(): () => number | null {
  const start = readCpuTimes();
  return () => {
    const end = readCpuTimes();
    if (start === null || end === null || end.total <= start.total) return null;
    return (100 * (end.steal - start.steal)) / (end.total - start.total);
  };
}

export function formatSteal(percent: number | null): string {
  return percent === null ? "host steal n/a" : `host steal ${percent.toFixed(1)} %`;
}
