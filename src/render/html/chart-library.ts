import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/**
 * Apache ECharts' minified browser build, as text to inline into a page (no CDN: the page must work
 * offline). Read from the installed `echarts` package, whose `exports` map names no `dist/` file:
 * its CommonJS entry is `dist/echarts.js`, and the minified build sits beside it. The single-file
 * binary has no node_modules; scripts/build-binary.mjs replaces this module with one holding the
 * text itself.
 */
let cached: string | undefined;

export function chartLibrary(): string {
  if (cached === undefined) {
    const require = createRequire(import.meta.url);
    cached = readFileSync(join(dirname(require.resolve('echarts')), 'echarts.min.js'), 'utf8');
  }
  return cached;
}
