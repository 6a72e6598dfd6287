import type { ExternalSorter } from './external-sort.js';
import { mapRecord } from './mapper.js';
import type { AccessPlan } from './record-access.js';
import { batchItems, type ReadBatch } from './sources.js';
import { stage } from './staging.js';
import { type DroppedField, originalRecord, type Rejection } from './types.js';

/** What staging one batch of read records gave: the refused ones in input order, and how many were held. */
export interface StagedBatch {
  rejections: Rejection[];
  staged: number;
  /** Each field the batch's records left out, with the first record that did. */
  dropped: DroppedField[];
}

/**
 * Splits pending records into fields, maps each record read, and holds the good ones in the sort:
 * the reading thread does this, and so does its helper (read-helper.ts) for the batches handed to
 * it. Refusals are values, in input order.
 */
export function stageBatch(
  batch: Pick<ReadBatch, 'items' | 'pending'>,
  plan: AccessPlan,
  keepRaw: boolean,
  sorter: ExternalSorter,
): StagedBatch {
  const rejections: Rejection[] = [];
  const dropped: DroppedField[] = [];
  let staged = 0;
  for (const item of batchItems(batch)) {
    if (!item.ok) {
      const { bad } = item;
      rejections.push({ source: bad.source, reason: bad.reason, record: bad.text, seq: bad.ordinal });
      continue;
    }
    const mapped = mapRecord(item.record, plan);
    if (mapped.ok) {
      sorter.add(stage(mapped.mapped, keepRaw));
      staged++;
      for (const left of mapped.mapped.dropped ?? []) {
        if (!dropped.some((d) => d.field === left.field))
          dropped.push({ ...left, source: mapped.mapped.source });
      }
    } else {
      const { source, value, ordinal } = item.record;
      rejections.push({ source, reason: mapped.reason, record: originalRecord(value), seq: ordinal });
    }
  }
  return { rejections, staged, dropped };
}
