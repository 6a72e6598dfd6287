import fc from 'fast-check';
import { COUNT_OPERATORS } from '../../src/shared/chart-filters.js';
import type { Period } from '../../src/shared/time-bins.js';
import {
  PROPERTY_NAMES,
  propertyFilterArb,
  type RangeInput,
  TRAIT_NAMES,
  timeArb,
  ZONES,
} from './generators.js';

/** Random EventFilter / IntentFilter / UserFilter / TraitGroup inputs (schema-valid) for a range. */

const scalar = fc.constantFrom<string | number | boolean>('free', 'pro', 'Pro', 'x', 1, 2, 1.5, true, false);

export function withinArb(range: RangeInput) {
  const time = timeArb(range);
  return fc.oneof(
    fc
      .tuple(time, time)
      .filter(([a, b]) => a !== b)
      .map(([a, b]) => (a < b ? { start: a, end: b } : { start: b, end: a })),
    time.map((start) => ({ start })),
    time.map((end) => ({ end })),
    fc.record({
      period: fc.record({
        number: fc.integer({ min: 1, max: 3 }),
        unit: fc.constantFrom<Period>('day', 'week', 'month'),
        tz: fc.constantFrom(...ZONES),
      }),
    }),
  );
}

const counts = {
  number_of: fc.constantFrom(0, 1, 1, 2),
  number_of_operator: fc.constantFrom(...COUNT_OPERATORS),
  combine_previous_operation: fc.constantFrom('and', 'or', 'then'),
};

/** Present with probability `p` (fast-check's own optional keys are present 5 times in 6). */
export function sometimes<T>(arb: fc.Arbitrary<T>, p: number): fc.Arbitrary<T | undefined> {
  return fc.integer({ min: 0, max: 99 }).chain((roll) => (roll < p * 100 ? arb : fc.constant(undefined)));
}

/** Drops undefined keys so inputs look like what a client sends. */
function defined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

export function eventFilterArb(range: RangeInput, options: { groupBy?: boolean } = {}) {
  const groupBy = fc.record({
    property_name: fc.constantFrom(...PROPERTY_NAMES),
    property_values: fc.oneof(fc.constant([]), fc.array(scalar, { minLength: 1, maxLength: 3 })),
  });
  return fc
    .record({
      event_name: fc.constantFrom('Turn', 'Turn', 'Any Event', 'Page', 'Intent Informed', 'Nope'),
      with: sometimes(fc.array(propertyFilterArb(PROPERTY_NAMES), { minLength: 1, maxLength: 2 }), 0.4),
      within: sometimes(withinArb(range), 0.25),
      counts: sometimes(
        fc.record({ number_of: counts.number_of, number_of_operator: counts.number_of_operator }),
        0.3,
      ),
      combine_previous_operation: counts.combine_previous_operation,
      groupBy: options.groupBy ? sometimes(groupBy, 0.35) : fc.constant(undefined),
    })
    .map(({ counts: c, ...rest }) => defined({ ...rest, ...c }));
}

export function intentFilterArb(range: RangeInput) {
  return fc
    .record({
      intent: fc.constantFrom('billing', 'refund', 'Billing', 'Any Intent'),
      with: sometimes(
        fc.array(propertyFilterArb(['plan', 'model', 'tokens', 'missing']), { maxLength: 1 }),
        0.3,
      ),
      within: sometimes(withinArb(range), 0.25),
      counts: sometimes(
        fc.record({ number_of: counts.number_of, number_of_operator: counts.number_of_operator }),
        0.4,
      ),
      combine_previous_operation: counts.combine_previous_operation,
    })
    .map(({ counts: c, ...rest }) => defined({ ...rest, ...c }));
}

export function userFilterArb(range: RangeInput) {
  return fc
    .record({
      cohort: sometimes(fc.constant('All Users'), 0.3),
      with: sometimes(fc.array(propertyFilterArb(TRAIT_NAMES), { minLength: 1, maxLength: 2 }), 0.4),
      shown_intents: sometimes(fc.array(intentFilterArb(range), { minLength: 1, maxLength: 2 }), 0.3),
      performed_events: sometimes(fc.array(eventFilterArb(range), { minLength: 1, maxLength: 3 }), 0.5),
      combine_previous_operation: sometimes(fc.constantFrom('and', 'or'), 0.7),
    })
    .map(defined);
}

/** userFilters and shownIntents, usually absent so plain charts are common too. */
export function selectionArb(range: RangeInput) {
  const some = fc.record(
    {
      userFilters: fc.array(userFilterArb(range), { maxLength: 2 }),
      shownIntents: fc.array(intentFilterArb(range), { maxLength: 2 }),
    },
    { requiredKeys: [] },
  );
  return fc.oneof({ weight: 1, arbitrary: fc.constant({}) }, { weight: 1, arbitrary: some });
}

/** Observed values (no list, or an empty one) more often than listed ones, which seldom all match. */
export const traitGroupArb = fc.oneof(
  fc.record({ trait_name: fc.constantFrom(...TRAIT_NAMES) }),
  fc.record({ trait_name: fc.constantFrom(...TRAIT_NAMES), trait_values: fc.constant([]) }),
  fc.record({
    trait_name: fc.constantFrom(...TRAIT_NAMES),
    trait_values: fc.array(scalar, { minLength: 1, maxLength: 3 }),
  }),
);
