/** What /proc says of a process, for the benchmarks (no side effect on import, unlike placement.ts). */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const CLK_TCK = Number(spawnSync('getconf', ['CLK_TCK']).stdout?.toString().trim()) || 100;

/** CPU seconds used so far by process `pid`, all its threads (/proc/<pid>/stat). */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
}

/** Resident memory of process `pid`, in bytes (/proc/<pid>/status). */
export function rssOf(pid: number): number {
  return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) * 1024;
}
