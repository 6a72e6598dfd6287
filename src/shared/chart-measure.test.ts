import { describe, expect, it } from 'vitest';
import { parseMeasureText } from './chart-measure.js';

describe('parseMeasureText', () => {
  it('reads aggregate:property, a colon in the name kept', () => {
    expect(parseMeasureText('sum:cost')).toEqual({ aggregate: 'sum', property_name: 'cost' });
    expect(parseMeasureText('p95: a:b ')).toEqual({ aggregate: 'p95', property_name: 'a:b' });
    expect(parseMeasureText('count')).toEqual({ aggregate: 'count' });
    expect(parseMeasureText('mean:cost')).toMatch(/unknown aggregate "mean"/);
  });

  // Found by probing: "sum: n" measured "n", another property, without a word.
  it('takes a quoted property name as written', () => {
    expect(parseMeasureText("sum:' n'")).toEqual({ aggregate: 'sum', property_name: ' n' });
    expect(parseMeasureText('avg:"cost "')).toEqual({ aggregate: 'avg', property_name: 'cost ' });
  });
});
