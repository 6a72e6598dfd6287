import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../test/helpers/temp.js';
import { zoneOfFile, zoneOfOffset } from './system-zone.js';

const dir = tempDir('cas-zone-');
afterAll(() => dir.cleanup());

describe('zoneOfFile (TZ naming a zone file)', () => {
  it('names the zone by its path under zoneinfo, posix/ and right/ folded, a leading colon allowed', () => {
    expect(zoneOfFile('/usr/share/zoneinfo/America/New_York')).toBe('America/New_York');
    expect(zoneOfFile(':/usr/share/zoneinfo/right/Asia/Kathmandu')).toBe('Asia/Kathmandu');
    expect(zoneOfFile('/usr/share/zoneinfo/Not/AZone')).toBeUndefined();
    expect(zoneOfFile('America/New_York')).toBeUndefined();
    expect(zoneOfFile(undefined)).toBeUndefined();
  });

  it("follows a link to the zone's file, as /etc/localtime is one", () => {
    mkdirSync(join(dir.path, 'zoneinfo', 'Asia'), { recursive: true });
    writeFileSync(join(dir.path, 'zoneinfo', 'Asia', 'Tokyo'), 'TZif');
    symlinkSync(join(dir.path, 'zoneinfo', 'Asia', 'Tokyo'), join(dir.path, 'localtime'));
    expect(zoneOfFile(join(dir.path, 'localtime'))).toBe('Asia/Tokyo');
  });
});

describe('zoneOfOffset (TZ a POSIX fixed offset)', () => {
  it('is the Etc/GMT zone of its whole hours, west positive as POSIX has it', () => {
    expect(zoneOfOffset('UTC+5', 300)).toBe('Etc/GMT+5');
    expect(zoneOfOffset('XYZ-3', -180)).toBe('Etc/GMT-3');
    expect(zoneOfOffset('<-03>3', 180)).toBe('Etc/GMT+3');
    expect(zoneOfOffset('UTC0', 0)).toBe('UTC');
  });

  it('is nothing for half hours, daylight-saving rules, or no TZ', () => {
    expect(zoneOfOffset('<+0530>-5:30', -330)).toBeUndefined();
    expect(zoneOfOffset('EST5EDT,M3.2.0,M11.1.0', 300)).toBeUndefined();
    expect(zoneOfOffset(undefined, 300)).toBeUndefined();
  });
});
