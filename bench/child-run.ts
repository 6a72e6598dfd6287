import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';

export interface ChildRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** The kernel's high-water mark of the child's resident memory (VmHWM), polled until it exits. */
  peakRssMb: number;
}

/** Collects a benchmarked child's output and peak RSS until it closes. */
export async function childRun(child: ChildProcess): Promise<ChildRun> {
  let stdout = '';
  let stderr = '';
  // No stdout stream when the child writes it to a file of its own.
  child.stdout?.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
  let peakKb = 0;
  const poll = setInterval(() => {
    try {
      const m = /VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
      if (m) peakKb = Math.max(peakKb, Number(m[1]));
    } catch {
      // The process has just exited.
    }
  }, 50);
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  clearInterval(poll);
  return { code, stdout, stderr, peakRssMb: peakKb / 1024 };
}
