import { accessSync, constants, readFileSync, type Stats, statSync } from 'node:fs';
import { buildMappingSpec, type MappingSpec } from '../importer/mapping-spec.js';
import { sniffPreset, sniffStdinPreset } from '../importer/presets/detect.js';
import { isPresetName, PRESET_NAMES, type PresetName } from '../importer/presets/preset.js';
import { detectFormat, type InputFile, unreadableFile } from '../importer/sources.js';
import { MAX_SESSION_GAP_MS } from '../shared/event-bodies.js';
import { fileErrorReason } from '../shared/file-errors.js';
import { canonicalPath } from '../shared/file-path.js';
import { parseJsonText } from '../shared/json-syntax.js';
import { LIMITS } from '../shared/limits.js';
import { isTimeZone } from '../shared/primitives.js';
import { UsageError } from './errors.js';

/** `cas import` flags as commander hands them over (strings until checked here). */
export interface ImportFlags {
  format?: string | undefined;
  kind?: string | undefined;
  map?: string[] | undefined;
  mapping?: string | undefined;
  set?: string[] | undefined;
  tz?: string | undefined;
  sessionGap?: string | undefined;
  /** Commander's `--no-end`. */
  end?: boolean | undefined;
  batchSize?: string | undefined;
  concurrency?: string | undefined;
  /** `--resume` is the default; `--restart` discards the checkpoint and starts over. */
  resume?: boolean | undefined;
  restart?: boolean | undefined;
  dryRun?: boolean | undefined;
  rejectFile?: string | undefined;
  maxErrors?: string | undefined;
  keepDuplicates?: boolean | undefined;
  preset?: string | undefined;
}

export interface ImportSettings {
  files: InputFile[];
  spec: MappingSpec;
  gapMs: number;
  noEnd: boolean;
  /** Undefined: the default for the service the import sends to (commands/import.ts). */
  batchSize: number | undefined;
  /** Absent: the default (commands/import.ts). */
  concurrency: number | undefined;
  maxErrors: number;
  resume: boolean;
  restart: boolean;
  dryRun: boolean;
  rejectFile: string | undefined;
  keepDuplicates: boolean;
}

const UNITS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `30m`, `1h`, `90s`, `1.5h`, `2d`; a bare number is seconds. */
export function parseDuration(flag: string, text: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?$/.exec(text.trim());
  const ms = m ? Number(m[1]) * (UNITS[m[2] ?? 's'] ?? 1000) : Number.NaN;
  if (!Number.isFinite(ms) || ms <= 0)
    throw new UsageError(`${flag} must be a duration such as 30m, 2h or 90s, got "${text}"`);
  return ms;
}

/**
 * `--session-gap`, in whole milliseconds as the wire carries it, within what the service takes: 0.5ms,
 * 1.0005s and 400d passed here and then had every record refused, naming session_gap_ms (found by probing).
 */
function sessionGap(text: string): number {
  const ms = Math.round(parseDuration('--session-gap', text));
  if (ms < 1 || ms > MAX_SESSION_GAP_MS)
    throw new UsageError(
      `--session-gap must be from 1ms to ${MAX_SESSION_GAP_MS / 86_400_000}d, got "${text}"`,
    );
  return ms;
}

function wholeNumber(
  flag: string,
  text: string | undefined,
  fallback: number,
  min: number,
  max: number,
): number {
  if (text === undefined) return fallback;
  const n = Number(text);
  // Number('') is 0: `--max-errors ''` stopped at the first rejection. Decimal digits only, as every
  // other number flag reads them: Number() took 1e3, 0x10, +5 and 1.0 (found by probing).
  if (!/^\s*\d+\s*$/.test(text) || !Number.isInteger(n) || n < min || n > max) {
    throw new UsageError(`${flag} must be a whole number from ${min} to ${max}, got "${text}"`);
  }
  return n;
}

function readMappingFile(path: string): { name: string; json: unknown } {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new UsageError(
      `--mapping: cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
    );
  }
  const json = parseJsonText(text, (why) => new UsageError(`--mapping: ${path} is not valid JSON: ${why}`));
  return { name: path, json };
}

/**
 * Why an input that exists is not one cas reads, and what to give instead. A pipe (`<(zcat x)`, a
 * FIFO) can be read once only, so it goes through stdin, where no checkpoint is kept.
 */
function notAFile(path: string, stats: Stats): string {
  if (stats.isDirectory()) return `${path} is a directory: name the files in it (cas import ${path}/*.csv)`;
  if (stats.isFIFO() || stats.isCharacterDevice() || stats.isSocket()) {
    const kind = stats.isFIFO() ? 'a pipe' : stats.isSocket() ? 'a socket' : 'a device';
    return `${path} is ${kind}, which cas reads only as stdin: cas import - --format csv|jsonl < ${path}`;
  }
  return `${path} is not a file`;
}

function inputFiles(
  paths: readonly string[],
  format: string | undefined,
  preset: PresetName | undefined,
): InputFile[] {
  if (paths.length === 0) throw new UsageError('cas import needs at least one file (or - for stdin)');
  if (paths.filter((p) => p === '-').length > 1) throw new UsageError('stdin (-) can be read only once');
  const unreadable = (path: string, error: unknown): UsageError =>
    new UsageError(`cannot read ${path}: ${fileErrorReason(error)}`);
  return paths.map((path) => {
    // What the path is comes first: a directory was "cannot tell the format", then "not a file".
    if (path !== '-') {
      let stats: Stats;
      try {
        stats = statSync(path);
      } catch (error) {
        throw unreadable(path, error);
      }
      if (!stats.isFile()) throw new UsageError(notAFile(path, stats));
      // Refused here, naming the input: opened later, EACCES read as the data directory's (exit 5).
      let what: string | undefined;
      try {
        accessSync(path, constants.R_OK);
        what = unreadableFile(path);
      } catch (error) {
        throw unreadable(path, error);
      }
      if (what !== undefined) throw new UsageError(`${path}: ${what}`);
    }
    // A preset reads JSON whatever the file is called.
    const detected = detectFormat(path, format ?? (preset === undefined ? undefined : 'jsonl'));
    if (typeof detected !== 'string') throw new UsageError(detected.error);
    return { path, display: path === '-' ? '<stdin>' : path, format: detected, preset };
  });
}

/** `--set` fields a preset fills in; its formats say everything else. */
const PRESET_SET_FIELDS = new Set(['user_id', 'device_id']);

/** `--preset <name>`: a known name, and none of the flags that say how to map flat records. */
function presetFlag(flags: ImportFlags): PresetName | undefined {
  const name = flags.preset;
  if (name === undefined) return undefined;
  if (!isPresetName(name))
    throw new UsageError(`--preset must be one of ${PRESET_NAMES.join(', ')}, got "${name}"`);
  const flat = [
    ['--kind', flags.kind],
    ['--map', flags.map],
    ['--mapping', flags.mapping],
  ].find(([, v]) => v !== undefined);
  if (flat) throw new UsageError(`--preset ${name} maps the records itself; drop ${String(flat[0])}`);
  if (flags.format === 'csv') throw new UsageError(`--preset ${name} reads JSON, not --format csv`);
  const set = (flags.set ?? []).find((v) => !PRESET_SET_FIELDS.has(v.slice(0, v.indexOf('=')).trim()));
  if (set !== undefined)
    throw new UsageError(`--set "${set}": with --preset only user_id and device_id can be set`);
  return name;
}

/**
 * Without `--preset` and any flag of the flat mapping, each JSON input (stdin too, handed on as
 * `stdin`) whose first record is unmistakably one of the presets' formats is read by that preset
 * (importer/presets/detect.ts); any other keeps the flat mapping.
 */
export async function detectPresets(
  s: ImportSettings,
  flags: ImportFlags,
  stdin?: AsyncIterable<Buffer | string>,
  signal?: AbortSignal,
): Promise<ImportSettings & { stdin?: AsyncIterable<Buffer> }> {
  const flat = flags.kind !== undefined || flags.map !== undefined || flags.mapping !== undefined;
  const sets = (flags.set ?? []).every((v) => PRESET_SET_FIELDS.has(v.slice(0, v.indexOf('=')).trim()));
  if (flags.preset !== undefined || flat || !sets) return s;
  // Stdin is looked at as a file is, and handed on whole (its bytes read so far first).
  const piped = stdin && s.files.some((f) => f.format === 'jsonl' && f.path === '-');
  const sniffed = piped ? await sniffStdinPreset(stdin, signal) : undefined;
  const files = await Promise.all(
    s.files.map(async (f) => {
      if (f.format !== 'jsonl') return f;
      if (f.path !== '-') return { ...f, preset: await sniffPreset(f.path) };
      return sniffed ? { ...f, preset: sniffed.preset } : f;
    }),
  );
  return sniffed ? { ...s, files, stdin: sniffed.stdin } : { ...s, files };
}

/** The reject file is opened for writing before anything is read: naming an input there emptied it. */
function refuseInputAsRejects(rejectFile: string, files: readonly { path: string }[]): void {
  const target = canonicalPath(rejectFile);
  const input = files.find((f) => f.path !== '-' && canonicalPath(f.path) === target);
  if (input)
    throw new UsageError(`--reject-file ${rejectFile} is the input file ${input.path}: give another path`);
}

/** Every flag checked up front, each error naming its flag (exit 2), before anything is read or sent. */
export function importSettings(paths: readonly string[], flags: ImportFlags): ImportSettings {
  const tz = flags.tz ?? 'UTC';
  if (!isTimeZone(tz))
    throw new UsageError(`--tz: unknown time zone "${tz}" (use an IANA name such as Europe/Paris)`);
  const built = buildMappingSpec({
    kind: flags.kind,
    map: flags.map,
    set: flags.set,
    mappingFile: flags.mapping === undefined ? undefined : readMappingFile(flags.mapping),
    tz,
  });
  if (!built.ok) throw new UsageError(built.error);
  // --restart won without a word (found by probing).
  if (flags.resume === true && flags.restart === true) {
    throw new UsageError('--resume and --restart contradict each other: give one (--resume is the default)');
  }
  const files = inputFiles(paths, flags.format, presetFlag(flags));
  if (flags.rejectFile !== undefined) refuseInputAsRejects(flags.rejectFile, files);
  return {
    files,
    spec: built.spec,
    gapMs: sessionGap(flags.sessionGap ?? '30m'),
    noEnd: flags.end === false,
    batchSize:
      flags.batchSize === undefined
        ? undefined
        : wholeNumber('--batch-size', flags.batchSize, 500, 1, LIMITS.eventsPerRequest),
    concurrency:
      flags.concurrency === undefined ? undefined : wholeNumber('--concurrency', flags.concurrency, 4, 1, 64),
    maxErrors: wholeNumber('--max-errors', flags.maxErrors, 100, 0, Number.MAX_SAFE_INTEGER),
    resume: flags.resume !== false,
    restart: flags.restart === true,
    dryRun: flags.dryRun === true,
    rejectFile: flags.rejectFile,
    keepDuplicates: flags.keepDuplicates === true,
  };
}
