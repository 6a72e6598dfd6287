import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { LIMITS } from '../shared/limits.js';
import { addServeLimitOptions, limitsFromFlags, parseDuration, parseSize } from './serve-limits.js';

describe('serve limit flags', () => {
  it('reads sizes in binary multiples and durations in ms, s or m', () => {
    expect(parseSize('10MiB')).toBe(10 * 1024 * 1024);
    expect(parseSize('512k')).toBe(512 * 1024);
    expect(parseSize('1048576')).toBe(1048576);
    expect(parseDuration('500ms')).toBe(500);
    expect(parseDuration('30s')).toBe(30_000);
    expect(parseDuration('2m')).toBe(120_000);
    expect(parseDuration('250')).toBe(250);
    for (const bad of ['', '0', '-1', '1.5MiB', '10x', 'MiB']) expect(() => parseSize(bad)).toThrow(/size/);
    for (const bad of ['0', '1h', '1.5s', 'soon']) expect(() => parseDuration(bad)).toThrow(/duration/);
  });

  it('sets only the limits given, and shows each default in --help', () => {
    const command = addServeLimitOptions(new Command('serve').exitOverride());
    command.parse(['--max-body', '1MiB', '--request-timeout', '2s', '--ingest-rate', '0'], { from: 'user' });
    expect(limitsFromFlags(command.opts())).toEqual({
      bodyBytes: 1024 * 1024,
      requestTimeoutMs: 2_000,
      ingestRatePerSecond: 0,
    });
    const help = command.helpInformation().replace(/\s+/g, ' ');
    expect(help).toContain('(default: 10MiB)');
    expect(help).toContain(`(default: ${LIMITS.requestTimeoutMs / 1000}s)`);
    expect(help).toMatch(/--max-connections-per-address <n>/);
    // decisions §2's chart limits are set on serve too.
    const charts = addServeLimitOptions(new Command('serve').exitOverride());
    charts.parse(['--max-chart-bins', '2000', '--max-session-ids', '10', '--max-drilldown-rows', '5'], {
      from: 'user',
    });
    expect(limitsFromFlags(charts.opts())).toEqual({
      chartBins: 2000,
      sessionIdsPerPoint: 10,
      drilldownRows: 5,
    });
  });

  it('refuses a bad value naming the flag', () => {
    const command = addServeLimitOptions(
      new Command('serve').exitOverride().configureOutput({ writeErr: () => {} }),
    );
    expect(() => command.parse(['--max-events', '0'], { from: 'user' })).toThrow(/--max-events/);
  });
});
