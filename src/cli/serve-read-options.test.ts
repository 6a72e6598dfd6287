import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { addServeReadOptions, readOptionsFromFlags } from './serve-read-options.js';

function parse(args: string[]) {
  const command = addServeReadOptions(new Command('serve').exitOverride());
  command.parse(args, { from: 'user' });
  return readOptionsFromFlags(command.opts());
}

describe('cas serve read options', () => {
  it('turn the flags into read limits and a DuckDB memory limit', () => {
    expect(
      parse([
        '--read-connections',
        '4',
        '--query-timeout',
        '2s',
        '--memory-limit',
        '512MiB',
        '--max-chart-points',
        '5000',
        '--max-response',
        '4MiB',
      ]),
    ).toEqual({
      reads: { readConnections: 4, queryTimeoutMs: 2000, chartCells: 5000, responseBytes: 4 * 1024 * 1024 },
      memoryLimit: `${512 * 1024 * 1024}B`,
    });
  });

  it('leave what is not given to the service defaults, and refuse nonsense', () => {
    expect(parse([])).toEqual({ reads: {}, memoryLimit: undefined });
    expect(() => parse(['--read-connections', '0'])).toThrow(/at least 1/);
    expect(() => parse(['--query-timeout', 'soon'])).toThrow(/duration/);
  });
});
