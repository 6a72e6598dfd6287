import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, open, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { crc32 } from 'node:zlib';
import { z } from 'zod';

/**
 * Checkpoints live in `<data dir>/imports/<fingerprint>.json`. The fingerprint covers what decides
 * the events an input produces: each file (absolute path, size, mtime, hash of its first 64 KiB),
 * the options that shape events (kind, mappings, --set, --tz, gap, --no-end), and the target
 * (endpoint and project), so a changed file, other options or another service start afresh. It also
 * keeps the CRC-32 of the input's bytes (`content`): a file edited in place with its size and time
 * kept has the same fingerprint, and its resume or "already imported" is set aside by that.
 */
export const CHECKPOINT_VERSION = 2;
const HEAD_BYTES = 64 * 1024;

/** Witnesses a checkpoint keeps at most: a run adds one at each power of two of its acknowledged events. */
export const MAX_WITNESSES = 64;

export const checkpointSchema = z.object({
  version: z.literal(CHECKPOINT_VERSION),
  fingerprint: z.string(),
  updated_at: z.string(),
  /** Records before this index of the sorted run are done: every event they produced is stored. */
  position: z.number().int().min(0),
  complete: z.boolean(),
  /** Records the service refused before `position` (so a resumed run still exits 6 for them). */
  rejected: z.number().int().min(0),
  /** Records the input held, mapped or not: on a complete checkpoint, what a re-run reports. */
  records: z.number().int().min(0).optional(),
  /** An event id of this import the service stored (see `CheckpointData.witness`). */
  witness: z.string().optional(),
  /** More of them, spread over the run (see `CheckpointData.witnesses`). */
  witnesses: z.array(z.string()).max(MAX_WITNESSES).optional(),
  /** CRC-32 of the input's bytes as read, hex: a resume of other bytes starts afresh. */
  content: z.string().optional(),
  /** `checkpointLineage` of the import: the same paths, options and target, whatever the bytes. */
  lineage: z.string().optional(),
});
export type Checkpoint = z.infer<typeof checkpointSchema>;

export interface FileIdentity {
  path: string;
  size: number;
  mtimeMs: number;
  head: string;
}

export async function identifyFile(path: string): Promise<FileIdentity> {
  const abs = resolve(path);
  const info = await stat(abs);
  const handle = await open(abs, 'r');
  try {
    const buf = Buffer.alloc(Math.min(HEAD_BYTES, info.size));
    await handle.read(buf, 0, buf.length, 0);
    return {
      path: abs,
      size: info.size,
      mtimeMs: info.mtimeMs,
      head: createHash('sha256').update(buf).digest('hex'),
    };
  } finally {
    await handle.close();
  }
}

/**
 * The CRC-32 of files' bytes in order, hex, as an import reading them computes it (`ImportStats.content`):
 * a checkpoint that keeps one is checked against it before it is resumed or its input called imported.
 */
export async function inputContent(paths: readonly string[]): Promise<string> {
  let crc = 0;
  for (const path of paths) {
    for await (const chunk of createReadStream(path, { highWaterMark: 256 * 1024 }))
      crc = crc32(chunk as Buffer, crc);
  }
  return crc.toString(16).padStart(8, '0');
}

export function fingerprint(files: readonly FileIdentity[], options: unknown, target: unknown): string {
  const text = JSON.stringify({ v: CHECKPOINT_VERSION, files, options, target });
  return createHash('sha256').update(text).digest('hex').slice(0, 32);
}

/**
 * What a fingerprint covers but the files' versions: the same paths (absolute), options and target.
 * A checkpoint of another fingerprint in the same lineage is of an earlier version of the same input
 * (an export that grew since), which no later run can resume or call imported.
 */
export function checkpointLineage(paths: readonly string[], options: unknown, target: unknown): string {
  const text = JSON.stringify({
    v: CHECKPOINT_VERSION,
    paths: paths.map((p) => resolve(p)),
    options,
    target,
  });
  return createHash('sha256').update(text).digest('hex').slice(0, 32);
}

/**
 * Removes the checkpoints of `of`'s lineage under other fingerprints last saved before `of` started,
 * best effort: an input imported again after it grew (a daily export appended to) left one
 * checkpoint per version in `imports/`, for good (found by probing). One saved since is a newer
 * version's (the file grew while this run read it, and another run imported that): it stays.
 * Checkpoints written before they named their lineage are left alone too.
 */
export async function removeSuperseded(
  path: string,
  of: { lineage: string; fingerprint: string; startedAt: number },
): Promise<number> {
  const dir = dirname(path);
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return 0;
  }
  let removed = 0;
  for (const name of names) {
    if (!name.endsWith('.json') || name === `${of.fingerprint}.json`) continue;
    const other = join(dir, name);
    const print = name.slice(0, -'.json'.length);
    const found = await readCheckpoint(other, print);
    if (found?.lineage !== of.lineage || !(Date.parse(found.updated_at) < of.startedAt)) continue;
    await rm(other, { force: true }).then(
      () => removed++,
      () => undefined,
    );
  }
  return removed;
}

export const checkpointPath = (dataDir: string, print: string): string =>
  join(dataDir, 'imports', `${print}.json`);

/** The checkpoint of this fingerprint, if one exists and is readable; a damaged one counts as none. */
export async function readCheckpoint(path: string, print: string): Promise<Checkpoint | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    return undefined;
  }
  try {
    const parsed = checkpointSchema.safeParse(JSON.parse(text));
    return parsed.success && parsed.data.fingerprint === print ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Write to a temporary file, fsync it, rename it over the old one, fsync the directory: after a
 * crash or power loss the file is the old checkpoint or the new one, never a torn mix.
 */
export async function writeCheckpoint(path: string, checkpoint: Checkpoint): Promise<void> {
  const dir = join(path, '..');
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const tmp = `${path}.${randomBytes(4).toString('hex')}.tmp`;
  const handle = await open(tmp, 'w', 0o600);
  try {
    try {
      await handle.writeFile(JSON.stringify(checkpoint));
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(tmp, path);
  } catch (error) {
    // A checkpoint that cannot be saved (a folder in its place, a full disk) left its `.tmp` behind (probe).
    await rm(tmp, { force: true }).catch(() => undefined);
    throw error;
  }
  const dirHandle = await open(dir, 'r');
  try {
    await dirHandle.sync();
  } catch {
    // Some filesystems refuse fsync on a directory; the rename is still atomic there.
  } finally {
    await dirHandle.close();
  }
}

/**
 * `--restart`'s removal: best effort, since a restart reads no checkpoint anyway and saving the next
 * one says what is wrong with the place. A folder there, or an `imports` it cannot write, ended the
 * run with an internal error before it began (probe).
 */
export async function removeCheckpoint(path: string): Promise<void> {
  await rm(path, { force: true }).catch(() => undefined);
}
