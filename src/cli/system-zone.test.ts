import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../test/helpers/temp.js';
import { zoneOfFile } from './system-zone.js';

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
