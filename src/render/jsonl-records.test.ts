import { describe, expect, it } from 'vitest';
import { renderNewKey } from './admin.js';
import { renderReprice } from './reprice.js';

/** `--format jsonl` prints the JSON object `--json` holds (README), so lists stay lists and no field goes. */
describe('JSONL holds what --json holds', () => {
  const options = { color: false, columns: 120 };

  it('cas reprice: unknown_models stays a list (it was joined into one string)', () => {
    const result = {
      prices_as_of: '2025-06-01',
      events_checked: 2,
      events_repriced: 0,
      summaries_checked: 1,
      summaries_updated: 0,
      unknown_models: ['bar-2', 'foo-1'],
    };
    const line = renderReprice(result, 'jsonl', { color: false });
    expect(JSON.parse(line)).toEqual(result);
    expect(JSON.parse(renderReprice(result, 'json', { color: false }))).toEqual(result);
  });

  it('cas keys create: the record whole, current included (it was left out)', () => {
    const key = {
      organization_id: 'org_1',
      apikey: 'secret',
      key_id: 'key_1',
      created_at: '2026-01-01T00:00:00.000Z',
      label: null,
      current: false,
    };
    expect(JSON.parse(renderNewKey(key, 'jsonl', options))).toEqual(key);
  });
});
