import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * `npm run bench -- startup [--runs=20]`: median wall time of `cas --version` and `cas --help`
 * against `node -e 0` (issue 8: at most 3x), and of the single executable when it has been built.
 */
function median(command: string, args: string[], runs: number): number {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    spawnSync(command, args, { stdio: 'ignore' });
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)] ?? 0;
}

export async function run(args: string[]): Promise<void> {
  const runs = Number(args.find((a) => a.startsWith('--runs='))?.split('=')[1] ?? 20);
  const cli = fileURLToPath(new URL('../src/cli/main.js', import.meta.url));
  const binary = fileURLToPath(
    new URL(`../../dist/cas-${process.platform}-${process.arch}`, import.meta.url),
  );
  const base = median(process.execPath, ['-e', '0'], runs);
  console.log(`node -e 0:            ${base.toFixed(1)} ms (median of ${runs})`);
  for (const flag of ['--version', '--help']) {
    const t = median(process.execPath, [cli, flag], runs);
    console.log(
      `cas ${flag.padEnd(10)}        ${t.toFixed(1)} ms = ${(t / base).toFixed(2)}x node -e 0 (target ≤ 3x)`,
    );
  }
  if (existsSync(binary)) {
    const t = median(binary, ['--help'], runs);
    console.log(`single executable --help: ${t.toFixed(1)} ms (target < 200 ms)`);
  } else {
    console.log('single executable: not built (npm run build:binary)');
  }
}
