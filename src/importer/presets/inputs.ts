import { basename } from 'node:path';
import { readJsonl } from '../jsonl-reader.js';
import { mapRecord } from '../mapper.js';
import type { AccessPlan } from '../record-access.js';
import { type InputFile, inputBytes, readInputs, unreadableReason } from '../sources.js';
import {
  type MappedRecord,
  originalRecord,
  type ReadItem,
  type Rejection,
  type SourceRef,
} from '../types.js';
import { PRESETS } from './index.js';
import { type JsonStreamItem, readJsonStream } from './json-stream.js';
import type { PresetMapper, PresetName } from './preset.js';
import { type PresetDefaults, type PresetItem, toMapped } from './record.js';

/** A record mapped to its wire event, or why it could not be: what the pipeline stages or rejects. */
export type MappedItem = { ok: true; mapped: MappedRecord } | { ok: false; rejection: Rejection };

export interface MappedReadOptions {
  plan: AccessPlan;
  onBytes?: ((n: number, chunk: Buffer) => void) | undefined;
  stdin?: NodeJS.ReadableStream | AsyncIterable<Buffer> | undefined;
}

/** Whitespace and a UTF-8 BOM before the first value. */
const LEADING = new Set([0x20, 0x09, 0x0a, 0x0d, 0xef, 0xbb, 0xbf]);

/**
 * A file's JSON values, one item each: a top-level array's elements (streamed), else JSON Lines for
 * log formats (a broken line costs only itself) or whole documents for the others.
 */
async function* valuesOf(
  file: InputFile,
  container: 'lines' | 'document',
  o: {
    onBytes?: ((n: number, chunk: Buffer) => void) | undefined;
    stdin?: NodeJS.ReadableStream | AsyncIterable<Buffer> | undefined;
  },
): AsyncGenerator<{ items: JsonStreamItem[]; array: boolean }> {
  const it = inputBytes(file, { skip: 0, onBytes: o.onBytes, stdin: o.stdin })[Symbol.asyncIterator]();
  const first = await it.next();
  if (first.done) return;
  const rest = async function* (): AsyncGenerator<Buffer> {
    yield first.value;
    for (let n = await it.next(); !n.done; n = await it.next()) yield n.value;
  };
  let i = 0;
  while (i < first.value.length && LEADING.has(first.value[i]!)) i++;
  const array = first.value[i] === 0x5b;
  if (array || container === 'document') {
    for await (const items of readJsonStream(rest())) yield { items, array };
    return;
  }
  let index = 0;
  for await (const batch of readJsonl(rest(), 0)) {
    const items = batch.items.map(
      (item): JsonStreamItem =>
        item.ok && item.value.format === 'jsonl'
          ? { ok: true, line: item.line, index: index++, value: item.value.value }
          : {
              ok: false,
              line: item.line,
              index: index++,
              reason: item.ok ? '' : item.reason,
              text: item.ok ? '' : item.text,
            },
    );
    yield { items, array: false };
  }
}

const join = (prefix: string, at: string): string =>
  prefix === '' ? at : at === '' ? prefix : `${prefix}.${at}`;

function located(item: PresetItem, prefix: string): PresetItem {
  if (prefix === '') return item;
  return item.ok
    ? { ok: true, record: { ...item.record, at: join(prefix, item.record.at) } }
    : { ...item, at: join(prefix, item.at) };
}

function defaultsOf(plan: AccessPlan): PresetDefaults {
  const fill = (name: string) => {
    const template = plan.spec.defaults.get(name);
    if (template === undefined) return undefined;
    return (s: SourceRef) =>
      template.replaceAll('{line}', String(s.line)).replaceAll('{file}', basename(s.file));
  };
  return { user: fill('user_id'), device: fill('device_id') };
}

/**
 * Every record of every input, mapped: files of a preset through its mapping module (after a first
 * pass over the files of a preset that needs one), the others through the flat mapping, ordinals
 * counted across all of them.
 */
export async function* readMapped(
  files: readonly InputFile[],
  o: MappedReadOptions,
): AsyncGenerator<{ items: MappedItem[] }> {
  const mappers = new Map<PresetName, PresetMapper>();
  const mapperOf = (name: PresetName): PresetMapper => {
    const known = mappers.get(name);
    if (known) return known;
    const observedFirst = !files.some((f) => f.preset === name && f.path === '-');
    const created = PRESETS[name].create({ tz: o.plan.spec.tz, observedFirst });
    mappers.set(name, created);
    return created;
  };
  for (const file of files) {
    const observe = file.preset === undefined ? undefined : mapperOf(file.preset).observe;
    if (!file.preset || !observe || file.path === '-') continue;
    try {
      for await (const { items } of valuesOf(file, PRESETS[file.preset].container, {}))
        for (const item of items) if (item.ok) observe(item.value);
    } catch {
      // The second pass meets the same error and reports it.
    }
  }
  const defaults = defaultsOf(o.plan);
  let ordinal = 0;
  for (const file of files) {
    if (file.preset === undefined) {
      const base = ordinal;
      for await (const batch of readInputs([file], { skip: 0, onBytes: o.onBytes, stdin: o.stdin })) {
        ordinal = base + batch.next;
        yield { items: batch.items.map((item) => flat(item, base, o.plan)) };
      }
      continue;
    }
    const preset = PRESETS[file.preset];
    const mapper = mapperOf(file.preset);
    let line = 0;
    try {
      for await (const { items, array } of valuesOf(file, preset.container, o)) {
        const out: MappedItem[] = [];
        for (const v of items) {
          const source = { file: file.display, line: v.line };
          line = v.line;
          if (!v.ok) {
            const at = array ? `[${v.index}]: ` : '';
            out.push({
              ok: false,
              rejection: { source, reason: `${at}${v.reason}`, record: v.text, seq: ordinal++ },
            });
            continue;
          }
          if (file.path === '-') mapper.observe?.(v.value);
          const prefix = array ? `[${v.index}]` : '';
          for (const item of mapper.map(v.value)) {
            const seq = ordinal++;
            const mapped = toMapped(located(item, prefix), source, seq, defaults, preset.label);
            if (mapped.ok) out.push(mapped);
            else {
              const record = item.ok ? item.record.raw : v.value;
              out.push({ ok: false, rejection: { source, reason: mapped.reason, record, seq } });
            }
          }
        }
        yield { items: out };
      }
    } catch (error) {
      const reason = unreadableReason(error);
      const source = { file: file.display, line: line + 1 };
      yield { items: [{ ok: false, rejection: { source, reason, record: '', seq: ordinal++ } }] };
    }
  }
}

function flat(item: ReadItem, base: number, plan: AccessPlan): MappedItem {
  if (!item.ok) {
    const { bad } = item;
    return {
      ok: false,
      rejection: { source: bad.source, reason: bad.reason, record: bad.text, seq: base + bad.ordinal },
    };
  }
  const record = { ...item.record, ordinal: base + item.record.ordinal };
  const mapped = mapRecord(record, plan);
  if (mapped.ok) return mapped;
  const rejection = {
    source: record.source,
    reason: mapped.reason,
    record: originalRecord(record.value),
    seq: record.ordinal,
  };
  return { ok: false, rejection };
}
