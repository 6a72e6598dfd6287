import { BENCH_LIST } from './list.js';

/** `npm run bench -- <name...> [--flags]`: each benchmark prints its own figures; no name runs them all. */
async function main(argv: string[]): Promise<void> {
  const names = argv.filter((a) => !a.startsWith('-'));
  const flags = argv.filter((a) => a.startsWith('-'));
  const selected = names.length > 0 ? names : Object.keys(BENCH_LIST);
  for (const name of selected) {
    const load = BENCH_LIST[name];
    if (!load) {
      console.error(`unknown benchmark "${name}"; known: ${Object.keys(BENCH_LIST).join(', ')}`);
      process.exitCode = 2;
      return;
    }
    console.log(`\n=== bench ${name} ===`);
    await (await load()).run(flags);
  }
}

await main(process.argv.slice(2));
