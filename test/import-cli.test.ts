import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { deflateRawSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SERVICE_FEATURES } from '../src/shared/health.js';
import { CAS_BIN, cleanEnv, runCli } from './helpers/cli.js';
import { FIXTURES } from './helpers/import.js';
import { spawnTracked } from './helpers/processes.js';
import { type QueueServer, startQueueServer } from './helpers/queue-server.js';
import { tempDir } from './helpers/temp.js';

/**
 * The CLI surface of `cas import` that needs no database: dry runs, stdin, flag errors, and delivery
 * to a queue server (a small real HTTP server speaking the queue contract, test/helpers/queue-server.ts).
 */
const dir = tempDir('cas-import-cli-');
let server: QueueServer;
beforeAll(async () => {
  server = await startQueueServer();
});
afterAll(async () => {
  await server.close();
  dir.cleanup();
});

const remote = () => [
  '--endpoint',
  server.url,
  '--api-key',
  'k',
  '--project',
  'p',
  '--data-dir',
  join(dir.path, 'data'),
];
const jsonl = (text: string) =>
  text
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe('cas import --dry-run', () => {
  it('prints the wire events as JSONL, the same on every run, and sends nothing', async () => {
    const args = [
      'import',
      join(FIXTURES, 'turns.csv'),
      join(FIXTURES, 'events.jsonl'),
      '--dry-run',
      '--json',
      ...remote(),
    ];
    const first = await runCli(args);
    expect(first.code).toBe(0);
    const events = jsonl(first.stdout);
    expect(events).toHaveLength(Number(JSON.parse(first.stderr).events));
    expect(new Set(events.map((e) => e.event_id)).size).toBe(events.length);
    expect(new Set(events.map((e) => e.event ?? e.type))).toEqual(
      new Set([
        'Conversation Turn',
        'Conversation Ended',
        'end_session',
        'identify',
        'Conversation Usage',
        'Conversation Function',
        'Purchase',
        'Feedback Given',
        'alias',
      ]),
    );
    expect((await runCli(args)).stdout).toBe(first.stdout);
    expect(server.stored.size).toBe(0);
  });

  it('reads stdin (-), gzip included, with --format', async () => {
    const csv = readFileSync(join(FIXTURES, 'turns.csv'));
    const plain = await runCli(['import', '-', '--format', 'csv', '--dry-run', '--json'], {
      input: csv.toString(),
    });
    expect(plain.code).toBe(0);
    const file = join(dir.path, 'turns.csv.gz');
    writeFileSync(file, gzipSync(csv));
    const gz = await runCli(['import', file, '--dry-run', '--json']);
    expect(gz.stdout).toBe(plain.stdout);
    expect(jsonl(plain.stdout).filter((e) => e.event === 'Conversation Turn')).toHaveLength(156);
    // An empty stdin said nothing at all (exit 0).
    const empty = await runCli(['import', '-', '--format', 'csv', '--dry-run', '--json'], { input: '' });
    expect([empty.code, empty.stdout]).toEqual([0, '']);
    expect(empty.stderr).toContain('cas: nothing to import: the input holds no records');
    // Zero bytes are not an input of no records: one rejected record saying what came (exit 6).
    const zeros = await runCli(['import', '-', '--format', 'csv', '--dry-run', '--json'], {
      input: '\0'.repeat(100),
    });
    expect(zeros.code, zeros.stderr).toBe(6);
    expect(zeros.stderr).toContain('<stdin>:1: zero bytes where text should begin');
  });

  // Stdin was never looked at for a preset: `cat conversations.json | cas import -` refused every
  // record of an export as the flat mapping's (stop 60's list). Plain or gzip, as its file is read.
  it('reads an export piped to stdin by the preset its file is read by, plain and gzip', async () => {
    const flags = ['--format', 'jsonl', '--set', 'user_id=me', '--dry-run', '--json'];
    for (const name of ['chatgpt-conversations.json', 'claude-conversations.json', 'openai-chat.jsonl']) {
      const path = join(FIXTURES, 'exports', name);
      const fromFile = await runCli(['import', path, '--set', 'user_id=me', '--dry-run', '--json']);
      expect(fromFile.code, fromFile.stderr).toBe(0);
      const bytes = readFileSync(path);
      for (const input of [bytes, gzipSync(bytes)]) {
        const piped = await runCli(['import', '-', ...flags], { input });
        expect(piped.code, piped.stderr).toBe(0);
        expect(piped.stdout, name).toBe(fromFile.stdout);
      }
    }
    // Records of the flat mapping are still read by it.
    const events = join(FIXTURES, 'events.jsonl');
    const flat = await runCli(['import', '-', '--format', 'jsonl', '--dry-run', '--json'], {
      input: readFileSync(events),
    });
    expect(flat.stdout).toBe((await runCli(['import', events, '--dry-run', '--json'])).stdout);
  });

  // Node's gunzip failed on the bytes after the data and lost the text it had just decoded: 30 records
  // of 2,000 (found by probing). Two members, as `cat a.gz b.gz` makes, then a tool's trailing bytes.
  it('reads every gzip member and keeps every record before trailing bytes, naming them', async () => {
    const csv = readFileSync(join(FIXTURES, 'turns.csv'));
    const plain = await runCli(['import', join(FIXTURES, 'turns.csv'), '--dry-run', '--json']);
    const cut = csv.indexOf('\n', csv.length >> 1) + 1;
    const members = Buffer.concat([gzipSync(csv.subarray(0, cut)), gzipSync(csv.subarray(cut))]);
    const file = join(dir.path, 'trailing.csv.gz');
    writeFileSync(file, Buffer.concat([members, Buffer.from('\n<html>503</html>\n')]));
    const gz = await runCli(['import', file, '--dry-run', '--json']);
    expect(gz.stdout).toBe(plain.stdout);
    expect(gz.code).toBe(6);
    expect(gz.stderr).toContain(
      `trailing.csv.gz:${csv.toString().trimEnd().split('\n').length + 1}: 18 byte(s) after the gzip data (from byte ${members.length}) are not gzip and were not read`,
    );
    // Data cut mid-line before them: that line is not read as a whole record (it was, as `…,gpt-`).
    const whole = join(dir.path, 'whole-lines.csv');
    writeFileSync(whole, csv.subarray(0, cut));
    const midLine = join(dir.path, 'mid-line.csv.gz');
    writeFileSync(midLine, Buffer.concat([gzipSync(csv.subarray(0, cut + 40)), Buffer.from('<html>')]));
    const cutShort = await runCli(['import', midLine, '--dry-run', '--json']);
    expect(cutShort.code).toBe(6);
    expect(cutShort.stdout).toBe((await runCli(['import', whole, '--dry-run', '--json'])).stdout);
  });

  // A member's text was read, and stored, before its checksum at its end told it wrong (found by
  // probing: the damaged turn stored, and the mended file's turn beside it).
  it('reads nothing of a gzip member whose checksum fails, nor after it, and says which', async () => {
    const csv = readFileSync(join(FIXTURES, 'turns.csv'));
    const cut = csv.indexOf('\n', csv.length >> 1) + 1;
    const half = join(dir.path, 'half.csv');
    writeFileSync(half, csv.subarray(0, cut));
    const first = gzipSync(csv.subarray(0, cut));
    const second = gzipSync(csv.subarray(cut));
    second[second.length - 7]! ^= 0x10;
    const file = join(dir.path, 'damaged.csv.gz');
    writeFileSync(file, Buffer.concat([first, second]));
    const gz = await runCli(['import', file, '--dry-run', '--json']);
    expect(gz.code).toBe(6);
    expect(gz.stderr).toContain(
      `cannot read the rest of the file: the gzip member at byte ${first.length} is corrupt (its checksum does not match)`,
    );
    expect(gz.stdout).toBe((await runCli(['import', half, '--dry-run', '--json'])).stdout);
  });

  // unix2dos turned the LF inside a quoted answer into CR LF too, and the re-exported day's multi-line
  // turns were stored again under other ids (found by probing).
  it('gives the same events to a file whose line breaks were converted, inside quoted cells too', async () => {
    const lf = 'kind,timestamp,user_id,user,assistant\nturn,2025-05-01T10:00:00Z,m,"line one\nline two",ok\n';
    const runs = [];
    for (const [name, text] of [
      ['lf.csv', lf],
      ['crlf.csv', lf.replaceAll('\n', '\r\n')],
      ['cr.csv', lf.replaceAll('\n', '\r')],
    ] as const) {
      const file = join(dir.path, name);
      writeFileSync(file, text);
      const run = await runCli(['import', file, '--dry-run', '--json']);
      expect(run.code, run.stderr).toBe(0);
      runs.push(run.stdout);
    }
    expect(jsonl(runs[0] ?? '').find((e) => e.event === 'Conversation Turn')).toMatchObject({
      properties: { user: 'line one\nline two' },
    });
    expect(runs[1]).toBe(runs[0]);
    expect(runs[2]).toBe(runs[0]);
  });
});

// Vendors send their exports zipped: read as text, each line was "invalid UTF-8" (found by probing).
/** A tar archive of one file, as `tar -cf` writes it: a 512-byte ustar header, then the file's blocks. */
function tarOf(text: string): Buffer {
  const header = Buffer.alloc(512);
  header.write('turns.csv', 0, 'latin1');
  header.write('0000644\0', 100, 'latin1');
  header.write(`${text.length.toString(8).padStart(11, '0')}\0`, 124, 'latin1');
  header.write('ustar\x0000', 257, 'latin1');
  const body = Buffer.alloc(Math.ceil(text.length / 512) * 512);
  body.write(text, 0, 'latin1');
  return Buffer.concat([header, body, Buffer.alloc(1024)]);
}

describe('cas import of a ZIP archive', () => {
  // A local file header, then deflated bytes: what an export's .zip starts with.
  const zip = Buffer.concat([
    Buffer.from([0x50, 0x4b, 0x03, 0x04, 0x14, 0x00, 0x00, 0x00, 0x08, 0x00]),
    deflateRawSync(Buffer.from('[{"mapping":{}}]\n'.repeat(200))),
  ]);

  it('says so and what to import instead, by name or by its bytes', async () => {
    const named = join(dir.path, 'export.zip');
    writeFileSync(named, zip);
    const byName = await runCli(['import', named, '--dry-run', '--json']);
    expect(byName.code).toBe(2);
    expect(byName.stderr).toContain(`${named}: a ZIP archive, which cas does not read`);
    const renamed = join(dir.path, 'conversations.json');
    writeFileSync(renamed, zip);
    const preset = await runCli([
      'import',
      renamed,
      '--preset',
      'chatgpt',
      '--set',
      'user_id=me',
      '--dry-run',
      '--json',
    ]);
    // Told by its bytes before the run, as by its name: exit 2, one line naming the file.
    expect(preset.code).toBe(2);
    expect(preset.stderr).toContain(`${renamed}: a ZIP archive, which cas does not read: extract it`);
    const flat = await runCli(['import', renamed, '--dry-run', '--json']);
    expect(flat.code).toBe(2);
    expect(flat.stderr).toContain(`${renamed}: a ZIP archive`);
    expect(flat.stderr).not.toContain('invalid UTF-8');
  });

  // Each was one "invalid UTF-8" (or an unusable header) per line, never saying what the file was;
  // then a rejected record (exit 6) where a ZIP by its name was a usage error (exit 2).
  it('refuses a UTF-16, bzip2, xz, zstd, ZIP or tar file before the run, saying what it is (exit 2), and inside gzip at its first record; a JSON Lines file named .csv is its first record', async () => {
    const text = 'timestamp,user_id,user,assistant\n2025-01-06T10:00:00Z,alice,hi,a\n';
    const refused: Array<[string, Buffer, string]> = [
      ['utf16.csv', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]), 'UTF-16 text'],
      ['bz.csv.gz', Buffer.from(`BZh91AY&SY${'x'.repeat(40)}`, 'latin1'), 'bzip2-compressed'],
      // Named as compressed files are: the format was "cannot tell from its name".
      ['bz.csv.bz2', Buffer.from(`BZh91AY&SY${'x'.repeat(40)}`, 'latin1'), 'bzip2-compressed'],
      [
        'xz.jsonl',
        Buffer.concat([Buffer.from([0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00]), Buffer.alloc(40)]),
        'xz-compressed',
      ],
      [
        'zst.csv',
        Buffer.concat([Buffer.from([0x28, 0xb5, 0x2f, 0xfd]), Buffer.alloc(40)]),
        'zstd-compressed',
      ],
      ['zip.csv', Buffer.concat([Buffer.from('PK\x03\x04', 'latin1'), Buffer.alloc(40)]), 'a ZIP archive'],
      ['export.tar', tarOf(text), 'a tar archive, which cas does not read: extract it (tar -xf)'],
      // By its name, before its bytes: it was "cannot tell the format" (probe).
      ['named.tar.gz', gzipSync(tarOf(text)), 'a tar archive, which cas does not read'],
      ['named.tgz', gzipSync(tarOf(text)), 'a tar archive, which cas does not read'],
      // A download that never got its data: read as text, it was "nothing to import", exit 0 (probe).
      ['zeros.csv.gz', Buffer.alloc(4096), 'zero bytes where text should begin'],
      ['zeros.jsonl', Buffer.alloc(3), 'zero bytes where text should begin'],
      // The first byte decides, as it does on stdin however its producer splits its writes.
      ['zero-then-text.jsonl', Buffer.from('\0{"kind":"turn"}\n'), 'zero bytes where text should begin'],
    ];
    for (const [name, bytes, said] of refused) {
      const file = join(dir.path, name);
      writeFileSync(file, bytes);
      const run = await runCli(['import', file, '--kind', 'turn', '--dry-run', '--json']);
      expect(run.code, run.stderr).toBe(2);
      expect(run.stderr).toContain(`${file}: ${said}`);
    }
    const lines = join(dir.path, 'lines.csv');
    writeFileSync(lines, '{"kind":"turn","user_id":"a","user":"hi","assistant":"yo"}\n'.repeat(3));
    const run = await runCli(['import', lines, '--kind', 'turn', '--dry-run', '--json']);
    expect(run.code, run.stderr).toBe(6);
    const said = run.stderr.split('\n').filter((l) => l.startsWith(lines));
    expect(said, run.stderr).toEqual([expect.stringContaining(`${lines}:1: `)]);
    expect(said[0]).toContain('this looks like JSON Lines, not CSV; name the file .jsonl, or import it');
    // Inside gzip they were read as text too, each line a rejection (found by probing): one now, exit 6.
    for (const [name, bytes, said] of [
      ['export.tar.gz', gzipSync(tarOf(text)), 'gzip data holding a tar archive'],
      ['twice.csv.gz', gzipSync(gzipSync(text)), 'gzip data holding gzip data compressed twice'],
      [
        'zeros-inside.csv.gz',
        gzipSync(Buffer.alloc(2000)),
        'gzip data holding zero bytes where text should begin',
      ],
    ] as const) {
      const file = join(dir.path, name);
      writeFileSync(file, bytes);
      const inside = await runCli([
        'import',
        file,
        '--format',
        'csv',
        '--kind',
        'turn',
        '--dry-run',
        '--json',
      ]);
      expect(inside.code, inside.stderr).toBe(6);
      expect(inside.stderr.trim().split('\n')).toEqual([
        expect.stringContaining(`${file}:1: ${said}`),
        expect.stringMatching(/^\{/),
      ]);
    }
    // Text that merely starts like a magic number is text.
    const lookalike = join(dir.path, 'bzh.csv');
    writeFileSync(lookalike, 'BZh9,user_id,user,assistant,timestamp\nx,alice,hi,a,2025-01-06T10:00:00Z\n');
    const read = await runCli(['import', lookalike, '--kind', 'turn', '--dry-run', '--json']);
    expect(read.code, read.stderr).toBe(0);
  });
});

describe('cas import refuses bad values with file:line', () => {
  it('a UTC offset past ±23:59 (+24:00 was read as the day before)', async () => {
    const file = join(dir.path, 'offsets.csv');
    writeFileSync(
      file,
      'timestamp,user_id,user,assistant\n2025-01-06T10:00:00+24:00,alice,hi,a\n2025-01-06T10:00:00+23:59,alice,hi,b\n',
    );
    const run = await runCli(['import', file, '--kind', 'turn', '--dry-run', '--json']);
    expect(run.code).toBe(6);
    expect(run.stderr).toContain(
      `${file}:2: timestamp "2025-01-06T10:00:00+24:00" has UTC offset +24:00; offsets lie within ±23:59`,
    );
    const turns = jsonl(run.stdout).filter((e) => e.event === 'Conversation Turn');
    expect(turns.map((e) => e.timestamp)).toEqual(['2025-01-05T10:01:00.000Z']);
  });

  it('a trait on a turn or a property on an identify (they were dropped without a word)', async () => {
    const csv = join(dir.path, 'traits.csv');
    writeFileSync(csv, 'timestamp,user_id,user,assistant,trait.plan\n2025-01-06T10:00:00Z,alice,hi,a,pro\n');
    const turn = await runCli(['import', csv, '--kind', 'turn', '--dry-run', '--json']);
    expect(turn.code).toBe(6);
    expect(turn.stderr).toContain(
      `${csv}:2: column "trait.plan": traits apply only to identify records (and end_session attributes); a turn record takes properties (prop.plan)`,
    );
    expect(turn.stdout).toBe('');
    const mixed = join(dir.path, 'mixed.jsonl');
    writeFileSync(
      mixed,
      [
        {
          kind: 'turn',
          timestamp: '2025-01-06T10:00:00Z',
          user_id: 'bob',
          user: 'hi',
          assistant: 'a',
          traits: { plan: 'pro' },
        },
        { kind: 'identify', id: 'carol', timestamp: '2025-01-06T09:00:00Z', 'prop.foo': 'bar' },
        { kind: 'identify', id: 'dave', timestamp: '2025-01-06T09:00:00Z', 'trait.foo': 'bar' },
      ]
        .map((r) => JSON.stringify(r))
        .join('\n'),
    );
    const run = await runCli(['import', mixed, '--dry-run', '--json']);
    expect(run.code).toBe(6);
    expect(run.stderr).toMatch(
      new RegExp(`${mixed}:1: key "traits": traits apply only to identify records;`),
    );
    expect(run.stderr).toMatch(new RegExp(`${mixed}:2: key "prop.foo": properties apply only to turn, `));
    expect(jsonl(run.stdout)).toEqual([expect.objectContaining({ user_id: 'dave', traits: { foo: 'bar' } })]);
    // With --kind, a --map target no record can take is refused before anything is read.
    const flag = await runCli(['import', csv, '--kind', 'turn', '--map', 'trait.plan=tier', '--dry-run']);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toMatch(/--map trait\.plan: traits apply only to identify records/);
  });
});

describe('cas import of JSONL fields that hold objects', () => {
  it('notes each field left out once, at the first record that has it; -q keeps it quiet', async () => {
    const file = join(dir.path, 'objects.jsonl');
    const turn = (n: number, extra: Record<string, unknown>) =>
      JSON.stringify({
        kind: 'turn',
        timestamp: `2025-01-07T10:0${n}:00Z`,
        user_id: 'u',
        user: `q${n}`,
        assistant: 'a',
        ...extra,
      });
    writeFileSync(
      file,
      [
        turn(1, { tags: ['x', 'y'] }),
        turn(2, { metadata: { plan: 'pro' } }),
        turn(3, { metadata: { plan: 'free' }, steps: [{ n: 1 }] }),
      ].join('\n'),
    );
    const run = await runCli(['import', file, '--dry-run', '--json']);
    expect(run.code, run.stderr).toBe(0);
    const notes = run.stderr.split('\n').filter((l) => l.includes('left out'));
    expect(notes).toEqual([
      `${file}:2: left out of this record and of every later one that has it: metadata must be a string, number, boolean or a list of strings or numbers, got {"plan":"pro"}; take what you need with --map <name>=metadata.<key>`,
      expect.stringMatching(
        new RegExp(
          `^${file}:3: left out .*: steps must be .*, got \\[\\{"n":1\\}\\]; take what you need with --map <name>=steps\\.<key>$`,
        ),
      ),
    ]);
    // The list of strings is a property value, kept.
    expect(jsonl(run.stdout).find((e) => e.event === 'Conversation Turn')?.properties).toMatchObject({
      tags: ['x', 'y'],
    });
    const quiet = await runCli(['import', file, '--dry-run', '--json', '-q']);
    expect(quiet.stderr).not.toContain('left out');
  });
});

describe('cas import flag errors', () => {
  it.each([
    [['--batch-size', '0'], /--batch-size must be a whole number from 1 to 2000/],
    [['--session-gap', 'soon'], /--session-gap must be a duration/],
    [['--tz', 'Mars/Olympus'], /--tz: unknown time zone/],
    [['--kind', 'chat'], /--kind must be one of/],
    [['--map', 'nonsense'], /--map "nonsense" must look like field=source/],
    [['--set', 'nofield'], /--set "nofield" must look like field=value, e\.g\. --set user_id=demo/],
    [['--mapping', '/nonexistent.json'], /--mapping: cannot read/],
    // A dry run starts no service, which is what checked it (found by probing).
    [['--prices', '/nonexistent-prices.json'], /--prices \/nonexistent-prices\.json: .*no such file/],
    // It made a file named `-` (found by probing).
    [['--reject-file', '-'], /--reject-file: give a file path; "-" is no file/],
  ])('%j exits 2 naming the flag', async (flags, message) => {
    const run = await runCli(['import', join(FIXTURES, 'turns.csv'), ...flags, '--dry-run']);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(message);
  });

  it('names a missing file and an unknown format', async () => {
    const missing = await runCli(['import', join(dir.path, 'nope.csv'), '--dry-run']);
    expect([missing.code, missing.stderr]).toEqual([
      2,
      expect.stringMatching(/cannot read .*nope\.csv: no such file/),
    ]);
    const txt = join(dir.path, 'data.txt');
    writeFileSync(txt, 'x');
    expect((await runCli(['import', txt, '--dry-run'])).stderr).toMatch(
      /cannot tell the format.*--format csv or --format jsonl/,
    );
    // A directory said "cannot tell the format", then with --format "is not a file"; a pipe the latter.
    const folder = join(dir.path, 'exports');
    mkdirSync(folder, { recursive: true });
    const inFolder = await runCli(['import', folder, '--dry-run']);
    expect([inFolder.code, inFolder.stderr.trim()]).toEqual([
      2,
      `cas: ${folder} is a directory: name the files in it (cas import ${folder}/*.csv)`,
    ]);
    const fifo = join(dir.path, 'pipe.csv');
    execFileSync('mkfifo', [fifo]);
    const piped = await runCli(['import', fifo, '--dry-run']);
    expect([piped.code, piped.stderr.trim()]).toEqual([
      2,
      `cas: ${fifo} is a pipe, which cas reads only as stdin: cas import - --format csv|jsonl < ${fifo}`,
    ]);
    // /dev/null was "a pipe" too.
    const device = await runCli(['import', '/dev/null', '--format', 'csv', '--dry-run']);
    expect([device.code, device.stderr.trim()]).toEqual([
      2,
      'cas: /dev/null is a device, which cas reads only as stdin: cas import - --format csv|jsonl < /dev/null',
    ]);
  });

  // EACCES at open was read as the data directory's ("run as the owner of the data directory"), exit 5.
  it('names an input file it may not read, exit 2, not the data directory', async () => {
    chmodSync(dir.path, 0o711);
    const place = join(dir.path, 'unreadable');
    mkdirSync(place, { mode: 0o777 });
    chmodSync(place, 0o777);
    const file = join(place, 'secret.csv');
    writeFileSync(file, 'timestamp,user_id,user,assistant\n');
    chmodSync(file, 0o000);
    const args = [CAS_BIN, 'import', file, '--kind', 'turn', '--data-dir', join(place, 'data')];
    // Root reads any file: the CLI then runs as nobody (setpriv, util-linux).
    const asRoot = process.getuid?.() === 0;
    const child = spawnTracked(
      asRoot ? 'setpriv' : process.execPath,
      asRoot ? ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, ...args] : args,
      { env: cleanEnv({ HOME: place }), stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(stderr.trim()).toBe(`cas: cannot read ${file}: permission denied`);
    expect(code).toBe(2);
  });

  it('explains what unsorted input costs in --help', async () => {
    const help = await runCli(['import', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/Order does not matter/);
    expect(help.stdout).toMatch(/provisional/);
    expect(help.stdout).toMatch(/bitext-customer-support-4514\.csv/);
    expect(help.stdout).toMatch(/--map user=messages\.0\.content/);
  });
});

describe('cas import to a queue server', () => {
  it("sends every event once; the summary counts what the server acknowledged; a killed run's spill folder goes", async () => {
    // A sort's spill folder left by a run that was killed (pid 999999999 is past Linux's pid_max),
    // which no later run removed, and a running one's (this process's), which stays.
    const imports = join(dir.path, 'data', 'imports');
    const dead = join(imports, 'sort-999999999-AbC123');
    const live = join(imports, `sort-${process.pid}-AbC123`);
    mkdirSync(dead, { recursive: true });
    mkdirSync(live, { recursive: true });
    writeFileSync(join(dead, 'run-0'), 'x');
    const file = join(FIXTURES, 'events.jsonl');
    const run = await runCli(['import', file, ...remote(), '--json', '--batch-size', '50']);
    expect([existsSync(dead), existsSync(live)]).toEqual([false, true]);
    expect(run.code).toBe(0);
    const summary = JSON.parse(run.stdout);
    expect(summary).toMatchObject({ records: 168, rejected: 0, duplicates: 0, accepted: summary.events });
    expect(server.stored.size).toBe(summary.events);
    expect(summary.batches).toBeGreaterThanOrEqual(Math.ceil(summary.events / 50));
    // Events of a session arrive in the order they were emitted, whatever lane carried them.
    const order = server.batches.flat();
    const sessions = new Map<string, string[]>();
    for (const id of order) {
      const e = server.stored.get(id);
      const s = String(e?.session_id);
      sessions.set(s, [...(sessions.get(s) ?? []), String(e?.type === 'end_session' ? 'end' : 'event')]);
    }
    for (const kinds of sessions.values())
      expect(kinds.indexOf('end')).toBe(kinds.includes('end') ? kinds.length - 1 : -1);
  });

  // It said first that "this service does not reopen sessions", as of a service without our extensions.
  it('an endpoint nobody answers: exit 7 at once, naming it, and no note about its features', async () => {
    const closed = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as AddressInfo;
        probe.close(() => resolve(port));
      });
    });
    const run = await runCli([
      'import',
      join(FIXTURES, 'turns.csv'),
      '--endpoint',
      `http://127.0.0.1:${closed}`,
      '--api-key',
      'k',
      '--project',
      'p',
      '--retries',
      '1',
      '--data-dir',
      join(dir.path, 'nobody'),
    ]);
    expect(run.code).toBe(7);
    expect(run.stderr.trim()).toMatch(
      /^cas: cannot reach GET \/healthz: cannot reach http:\/\/127\.0\.0\.1:\d+: connect ECONNREFUSED/,
    );
  });

  // A /healthz failing after every retry read as "a service without our extensions": a `cas serve`
  // got final ends and no history, and its next run's records were refused (found by probing).
  it.each([
    [503, 5],
    [429, 5],
  ])(
    'a /healthz answering %i after its retries ends the import (exit %i) before anything is sent',
    async (status, code) => {
      const failing = await startQueueServer({ healthStatus: status });
      try {
        const run = await runCli([
          'import',
          join(FIXTURES, 'turns.csv'),
          ...['--endpoint', failing.url, '--api-key', 'k', '--project', 'p', '--retries', '1'],
          ...['--data-dir', join(dir.path, `health-${status}`)],
        ]);
        expect(run.code, run.stderr).toBe(code);
        expect(run.stderr).toMatch(new RegExp(`${status} from GET /healthz`));
        expect(run.stderr).not.toMatch(/does not reopen sessions/);
        expect(failing.stored.size).toBe(0);
      } finally {
        await failing.close();
      }
    },
  );

  it('a /healthz answering 404 is a server without our extensions: the import goes on, saying what that costs', async () => {
    const bare = await startQueueServer({ healthStatus: 404 });
    try {
      const run = await runCli([
        'import',
        join(FIXTURES, 'turns.csv'),
        ...['--endpoint', bare.url, '--api-key', 'k', '--project', 'p', '--retries', '1'],
        ...['--data-dir', join(dir.path, 'health-404')],
      ]);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr).toMatch(/does not reopen sessions an import ended/);
      expect(bare.stored.size).toBeGreaterThan(0);
    } finally {
      await bare.close();
    }
  });

  it('reports one line per bad record on stderr (file:line: reason) and exits 6', async () => {
    const file = join(dir.path, 'bad.jsonl');
    writeFileSync(
      file,
      '{"kind":"turn","user_id":"u","user":"q","assistant":"a"}\n{"kind":"turn","user_id":"u"}\nnot json\n',
    );
    const run = await runCli(['import', file, ...remote()]);
    expect(run.code).toBe(6);
    const [note, ...lines] = run.stderr.trim().split('\n');
    // The queue server has no /healthz features: the import says what it cannot guarantee there.
    expect(note).toMatch(/does not reopen sessions an import ended/);
    expect(lines).toEqual([
      `${file}:2: missing user utterance: no value for user; map another column with --map user=<column>`,
      expect.stringMatching(new RegExp(`^${file}:3: not valid JSON`)),
    ]);
    expect(JSON.parse(run.stdout)).toMatchObject({ records: 3, rejected: 2 });
  });
});

describe('cas import interrupted with Ctrl-C', () => {
  it('shows progress off a terminal, saves the checkpoint, exits 130, and the next run finishes the job', async () => {
    const slow = await startQueueServer({ delayMs: 150 });
    try {
      const file = join(FIXTURES, 'events.jsonl');
      const args = [
        '--endpoint',
        slow.url,
        '--api-key',
        'k',
        '--project',
        'p',
        '--data-dir',
        join(dir.path, 'ctrl-c'),
      ];
      const flags = ['--batch-size', '4', '--concurrency', '1', '--json'];
      const child = spawnTracked(process.execPath, [CAS_BIN, 'import', file, ...args, ...flags], {
        env: cleanEnv(),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      // The plain progress line comes every 5 s; interrupt after the first one.
      while (!/records · /.test(stderr)) {
        if (child.exitCode !== null) throw new Error(`the import ended before it was interrupted: ${stderr}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      child.kill('SIGINT');
      expect(await exited).toBe(130);
      expect(stderr).toMatch(
        /sending [\d,]+\/[\d,]+ records · \d+% · ETA \S+ · [\d,]+ sent, [\d,]+ acked · [\d,]+ rec\/s · 0 rejected/,
      );
      expect(stderr).toMatch(/interrupted: the checkpoint is saved/);
      const partial = slow.stored.size;
      expect(partial).toBeGreaterThan(0);

      const again = await runCli(['import', file, ...args, '--json']);
      expect(again.code).toBe(0);
      const summary = JSON.parse(again.stdout);
      expect(summary.skipped).toBeGreaterThan(0);
      // The dry run shows what our own service is sent; where ends are final (this server), the
      // import also ends each conversation at its last record.
      const dry = await runCli(['import', file, '--dry-run', '--json']);
      const expected = jsonl(dry.stdout).map((e) => String(e.event_id));
      const ends = [...slow.stored.values()].filter((e) => String(e.event_id).includes('-cend-'));
      expect(ends.length).toBeGreaterThan(0);
      expect(new Set(ends.map((e) => e.event))).toEqual(new Set(['Conversation Ended']));
      const rest = [...slow.stored.keys()].filter((id) => !id.includes('-cend-'));
      expect(rest.sort()).toEqual(expected.sort());
    } finally {
      await slow.close();
    }
  }, 60_000);
});

describe('cas import stopped by the service', () => {
  // Only the 503 was said: not what was stored, nor that the same command resumes (found by probing).
  it('says what was stored and that the checkpoint is saved; the same command then resumes', async () => {
    const flaky = await startQueueServer({ failFrom: 4 });
    try {
      // With a record twice: a duplicate of the input is not one the service already had (it said
      // "1 already there" of a fresh store; found by probing).
      const fixture = readFileSync(join(FIXTURES, 'events.jsonl'), 'utf8');
      const file = join(dir.path, 'events-twice.jsonl');
      writeFileSync(file, `${fixture.split('\n')[0]}\n${fixture}`);
      const args = ['import', file, '--endpoint', flaky.url, '--api-key', 'k', '--project', 'p'];
      const flags = ['--data-dir', join(dir.path, 'stopped'), '--batch-size', '4', '--concurrency', '1'];
      const run = await runCli([...args, ...flags, '--retries', '1', '--json']);
      expect(run.code, run.stderr).toBe(5);
      const stored = flaky.stored.size;
      expect(stored).toBeGreaterThan(0);
      expect(run.stderr).toContain(
        `cas: stopped after ${stored} events were stored (0 already there) of ${run.stderr.match(/of ([\d,]+) records read/)?.[1]} records read; the checkpoint is saved: run the same command again to resume`,
      );
      expect(run.stderr).toMatch(/503 from POST \/bc\/v1\/events\/queue/);
      // --json still ends with the summary: stdout was empty (found by probing).
      const summary = JSON.parse(run.stdout) as Record<string, unknown>;
      expect(summary).toMatchObject({ accepted: stored, stopped: true });
      expect(String(summary.error)).toMatch(/503 from POST \/bc\/v1\/events\/queue/);
      flaky.heal();
      const again = await runCli([...args, ...flags, '--json']);
      expect(again.code, again.stderr).toBe(0);
      expect(JSON.parse(again.stdout).skipped).toBeGreaterThan(0);
    } finally {
      await flaky.close();
    }
  });
});

describe('cas import stopped early says exactly what was not stored', () => {
  it('--max-errors 3 reports the 4th rejected record and stops there, not a read chunk later', async () => {
    const file = join(dir.path, 'all-bad.csv');
    const rows = Array.from({ length: 20_000 }, (_, i) => `bad${i + 1},u1,hi,a`);
    writeFileSync(file, `timestamp,user_id,user,assistant\n${rows.join('\n')}\n`);
    const rejects = join(dir.path, 'all-bad.rejects.jsonl');
    const run = await runCli([
      'import',
      file,
      '--kind',
      'turn',
      '--max-errors',
      '3',
      '--reject-file',
      rejects,
      ...remote(),
      '--json',
    ]);
    expect(run.code).toBe(6);
    const lines = run.stderr.split('\n').filter((l) => l.startsWith(`${file}:`));
    expect(lines.map((l) => l.split(':')[1])).toEqual(['2', '3', '4', '5']);
    expect(readFileSync(rejects, 'utf8').trim().split('\n')).toHaveLength(4);
    expect(JSON.parse(run.stdout)).toMatchObject({
      records: 4,
      rejected: 4,
      stopped: true,
      unread: 19_996,
      unsent: 0,
    });
    expect(run.stderr).toMatch(
      /stopped at --max-errors after 4 rejected records: 19,996 records were not read;/,
    );
  });

  it('Ctrl-C while the service hangs: unsent counts every record not acknowledged, which a re-run sends', async () => {
    // Three requests answered, then none: the fourth is in flight and more are batched when Ctrl-C comes.
    const hang = await startQueueServer({ holdFrom: 4 });
    try {
      const file = join(dir.path, 'hang.csv');
      const rows = Array.from(
        { length: 100 },
        (_, i) => `${new Date(Date.UTC(2025, 0, 6, 10, i)).toISOString()},s${i},u${i % 5},q${i},a${i}`,
      );
      writeFileSync(file, `timestamp,session_id,user_id,user,assistant\n${rows.join('\n')}\n`);
      const flags = '--kind turn --no-end --batch-size 10 --concurrency 1 --json'.split(' ');
      const remoteFlags = ['--endpoint', hang.url, '--api-key', 'k', '--project', 'p'];
      const args = ['import', file, ...flags, ...remoteFlags, '--data-dir', join(dir.path, 'hang')];
      const child = spawnTracked(process.execPath, [CAS_BIN, ...args], {
        env: cleanEnv(),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      while (hang.held() === 0) {
        if (child.exitCode !== null) throw new Error('the import ended before the service hung');
        await new Promise((r) => setTimeout(r, 20));
      }
      child.kill('SIGINT');
      expect(await exited).toBe(130);
      const first = JSON.parse(stdout);
      // --no-end: one event per record, and the service stored exactly what it acknowledged.
      expect(first).toMatchObject({ records: 100, stopped: true, accepted: hang.stored.size });
      expect(first.accepted).toBeGreaterThan(0);
      expect(first.unsent).toBe(100 - first.accepted);
      hang.release();
      const again = await runCli(args);
      expect(again.code, again.stderr).toBe(0);
      expect(JSON.parse(again.stdout).accepted).toBe(first.unsent);
      expect(hang.stored.size).toBe(100);
    } finally {
      await hang.close();
    }
  }, 60_000);
});

describe('cas import --batch-size and --concurrency by default', () => {
  // 1,200 sessions of 3 turns: every lane has more events than one batch of 500 holds.
  const turns = () => {
    const file = join(dir.path, 'many-sessions.csv');
    const rows = Array.from({ length: 3_600 }, (_, i) => {
      const s = Math.floor(i / 3);
      const at = new Date(Date.UTC(2025, 0, 1) + s * 60_000 + (i % 3) * 1_000).toISOString();
      return `${at},s${s},u${s % 7},q${i},a${i}`;
    });
    writeFileSync(file, `timestamp,session_id,user_id,user,assistant\n${rows.join('\n')}\n`);
    return file;
  };
  it.each([
    ['our import features (a cas serve): 2,000 events a request', [...SERVICE_FEATURES], 2_000],
    ['no features (as the hosted service): 500 events a request', undefined, 500],
  ])('sends up to 4 requests at once, for one listing %s', async (_, features, batch) => {
    const slow = await startQueueServer({ delayMs: 200, ...(features ? { features } : {}) });
    try {
      const args = ['--endpoint', slow.url, '--api-key', 'k', '--project', 'p', '--kind', 'turn'];
      const data = ['--data-dir', join(dir.path, `lanes-${batch}`)];
      const run = await runCli(['import', turns(), ...args, ...data, '--json']);
      expect(run.code, run.stderr).toBe(0);
      expect(slow.stored.size).toBe(JSON.parse(run.stdout).events);
      expect(slow.maxInFlight()).toBeLessThanOrEqual(4);
      expect(slow.maxInFlight()).toBeGreaterThan(1);
      const largest = Math.max(...slow.batches.map((b) => b.length));
      expect(largest).toBeLessThanOrEqual(batch);
      // Every lane holds more than 500 events: into our service, requests carry more than that.
      if (batch > 500) expect(largest).toBeGreaterThan(500);
      // Each request in flight listens to the import's one abort signal: no leak, and no warning.
      expect(run.stderr).not.toMatch(/Warning/);
    } finally {
      await slow.close();
    }
  });
});
