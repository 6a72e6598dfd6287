import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildMappingSpec } from '../../src/importer/mapping-spec.js';
import { readMapped } from '../../src/importer/presets/inputs.js';
import type { PresetName } from '../../src/importer/presets/preset.js';
import { planAccess } from '../../src/importer/record-access.js';
import type { InputFile } from '../../src/importer/sources.js';
import type { Rejection, WireJson } from '../../src/importer/types.js';

export interface Mapped {
  /** Each record's wire event (no ids yet: the sessionizer adds them), in reading order. */
  events: WireJson[];
  rejections: Array<Pick<Rejection, 'reason'> & { where: string }>;
  records: number;
}

/**
 * Writes `files` (name → text) into `dir` and maps them with a preset, as `cas import --preset` reads
 * them (`set`: the `--set` options, `tz`: `--tz`).
 */
export async function mapPresetFiles(
  dir: string,
  preset: PresetName,
  files: Record<string, string>,
  set: string[] = [],
  tz = 'UTC',
): Promise<Mapped> {
  const inputs: InputFile[] = Object.entries(files).map(([name, text]) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return { path, display: name, format: 'jsonl', preset };
  });
  const spec = buildMappingSpec({ set, tz });
  if (!spec.ok) throw new Error(spec.error);
  const out: Mapped = { events: [], rejections: [], records: 0 };
  for await (const batch of readMapped(inputs, { plan: planAccess(spec.spec) })) {
    for (const item of batch.items) {
      out.records++;
      if (item.ok) out.events.push(item.mapped.event);
      else
        out.rejections.push({
          where: `${item.rejection.source.file}:${item.rejection.source.line}`,
          reason: item.rejection.reason,
        });
    }
  }
  return out;
}

export const jsonl = (rows: unknown[]): string => rows.map((r) => `${JSON.stringify(r)}\n`).join('');

/** One property of a mapped event (`properties.<key>`), for tests that check a few of them. */
export function prop(event: WireJson, key: string): unknown {
  const p = event.properties;
  return typeof p === 'object' && p !== null && !Array.isArray(p)
    ? Object.entries(p).find(([k]) => k === key)?.[1]
    : undefined;
}
