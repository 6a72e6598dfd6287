import type { OrgKeyAnswer } from '../shared/orgkeys.js';
import type { UdiRecord } from '../shared/udi.js';
import { type ListingOptions, renderListing } from './listing.js';
import { json, keyValueTable, type OutputFormat } from './output.js';

/** `cas intents …` and `cas keys …`. A created key's secret is drawn only in `renderNewKey`. */

export function renderIntents(intents: UdiRecord[], format: OutputFormat, options: ListingOptions): string {
  return renderListing(
    intents,
    {
      columns: ['name', 'id', 'description', 'patterns', 'attributes', 'archived'],
      rows: intents.map((i) => [
        i.intent.name,
        i.user_defined_intent_id,
        i.intent.description,
        i.patterns.join(' | '),
        i.attributes.map((a) => a.name).join(', '),
        i.archived,
      ]),
      empty: 'no user-defined intents',
      records: intents,
    },
    format,
    options,
  );
}

export function renderIntent(intent: UdiRecord, format: OutputFormat, options: ListingOptions): string {
  if (format === 'json') return json(intent);
  if (format === 'table') {
    const { intent: named, ...rest } = intent;
    return keyValueTable({ name: named.name, description: named.description, ...rest }, options);
  }
  return renderIntents([intent], format, options);
}

/**
 * The hosted service lists a key by its secret, with no key id: a table or CSV shows its first and
 * last four characters (`--json` the answer as it came), as a secret is shown once, when created.
 */
const keyShown = (k: OrgKeyAnswer): string =>
  k.key_id ?? (k.apikey.length > 12 ? `${k.apikey.slice(0, 4)}…${k.apikey.slice(-4)}` : '…');

export function renderKeys(keys: OrgKeyAnswer[], format: OutputFormat, options: ListingOptions): string {
  return renderListing(
    keys,
    {
      columns: ['key_id', 'label', 'created_at', 'current', 'organization_id'],
      rows: keys.map((k) => [
        keyShown(k),
        k.label,
        k.created_at,
        k.current ? 'this key' : '',
        k.organization_id,
      ]),
      empty: 'no keys',
      records: keys,
    },
    format,
    options,
  );
}

export function renderNewKey(key: OrgKeyAnswer, format: OutputFormat, options: ListingOptions): string {
  if (format === 'table') {
    const { apikey, ...rest } = key;
    return keyValueTable({ secret: apikey, ...rest }, options);
  }
  if (format === 'json') return json(key);
  const columns = ['apikey', 'key_id', 'label', 'created_at', 'organization_id'];
  const row = [key.apikey, key.key_id, key.label, key.created_at, key.organization_id];
  // JSONL holds the object `--json` holds (`current` included); CSV the columns.
  return renderListing(key, { columns, rows: [row], records: [key] }, format, options);
}

/** A small result (`removed`, `deleted`, `revoked`) as a record. */
export function renderDone(
  result: Record<string, unknown>,
  format: OutputFormat,
  options: ListingOptions,
): string {
  if (format === 'table') return keyValueTable(result, options);
  return json(result);
}
