import { genAiSpanRecord } from '../../shared/otel-genai.js';
import { otlpSpanEntries, type SpanEntry } from '../../shared/otlp-spans.js';
import { obj } from './fields.js';
import type { Preset } from './preset.js';
import type { PresetItem } from './record.js';

/**
 * OTLP/JSON trace files (`{resourceSpans: [{resource, scopeSpans: [{spans}]}]}`, one document or one
 * per line as the collector's file exporter writes them). Each span is decoded and mapped by the
 * OTLP receiver's own code (`shared/otlp-spans.ts`, `shared/otel-genai.ts`), and keeps the
 * receiver's event id `otel-<trace id>-<span id>`: a file holding spans that also arrived live (a
 * collector's dump backfilled after an outage) stores each span once, as the receiver stored it,
 * and the import counts the ones already stored as duplicates.
 */
export const otlp: Preset = {
  name: 'otlp',
  label: 'OTLP trace',
  container: 'document',
  twoPass: false,
  create: () => ({ map: mapTraces }),
};

/** Every GenAI span of an OTLP/JSON `ExportTraceServiceRequest` → records; other spans are none. */
export function mapTraces(value: unknown): PresetItem[] {
  const doc = obj(value)?.resource_spans === undefined ? value : camelCased(value);
  if (!Array.isArray(obj(doc)?.resourceSpans))
    return [{ ok: false, at: '', reason: 'not an OTLP trace document: no resourceSpans' }];
  const { entries, malformed } = otlpSpanEntries(doc);
  if (malformed !== undefined)
    return [{ ok: false, at: '', reason: `not an OTLP trace document: ${malformed}` }];
  return entries.flatMap(recordOf);
}

function recordOf(entry: SpanEntry): PresetItem[] {
  if (!entry.ok) return [{ ok: false, at: entry.issue.path, reason: entry.issue.message }];
  const r = genAiSpanRecord(entry.span);
  if (r.kind === 'skip') return [];
  const e = r.envelope;
  return [
    {
      ok: true,
      record: {
        kind: r.kind,
        at: entry.at,
        ms: e.timestamp === undefined ? undefined : Date.parse(e.timestamp),
        session: e.session,
        conversation: e.conversation,
        user: e.user,
        device: e.device,
        eventId: e.eventId,
        ownIdentity: true,
        properties: r.properties,
        raw: obj(entry.raw) ?? {},
      },
    },
  ];
}

const camel = (key: string): string => key.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

/**
 * Protobuf's field names (`resource_spans`, `start_time_unix_nano`), which some exporters write, as
 * OTLP/JSON's lowerCamelCase, the only spelling the shared decoder reads. Only keys change: attribute
 * names are values (`{key, value}`), so the spans' content is untouched.
 */
function camelCased(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(camelCased);
  const o = obj(v);
  if (!o) return v;
  return Object.fromEntries(Object.entries(o).map(([k, x]) => [camel(k), camelCased(x)]));
}
