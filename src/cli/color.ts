/**
 * Whether output to a terminal is coloured: not with `--no-color`, `NO_COLOR` (no-color.org: any
 * non-empty value), `FORCE_COLOR=0` or `TERM=dumb`. The last two dropped the tables' colours, which
 * cli-table3 reads them for, but the chart titles stayed bold (found by probing).
 */
export function wantsColor(
  isTty: boolean,
  flag: unknown,
  env: Readonly<Record<string, string | undefined>>,
): boolean {
  if (!isTty || flag === false) return false;
  if (env.NO_COLOR) return false;
  return env.FORCE_COLOR !== '0' && env.TERM !== 'dumb';
}
