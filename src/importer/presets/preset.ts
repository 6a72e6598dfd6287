import type { PresetItem } from './record.js';

export const PRESET_NAMES = [
  'chatgpt',
  'claude',
  'openai-chat',
  'openai-responses',
  'anthropic',
  'otlp',
] as const;
export type PresetName = (typeof PRESET_NAMES)[number];

export const isPresetName = (v: string): v is PresetName => (PRESET_NAMES as readonly string[]).includes(v);

/** What of the import's options a preset reads. */
export interface PresetOptions {
  /** `--tz`: the zone of times written without one. */
  tz: string;
  /**
   * `observe` sees every item of the run before `map` sees any (false when stdin is among the inputs:
   * its items are observed as they are mapped), so what follows an item in the input is known.
   */
  observedFirst: boolean;
}

/** The state of one run's mapping of a format (a Responses chain spans lines and files). */
export interface PresetMapper {
  /** Called with every item of every input of this preset before any is mapped (a first pass). */
  observe?: ((value: unknown) => void) | undefined;
  /** One item (a conversation, a log line, a trace document) → its records, in any order. */
  map(value: unknown): PresetItem[];
}

export interface Preset {
  name: PresetName;
  /** The format as messages name it. */
  label: string;
  /**
   * `lines`: one item per JSON line (logs), `document`: whole JSON values, pretty-printed or not
   * (exports, trace files). Either way a file that is one JSON array yields its elements.
   */
  container: 'lines' | 'document';
  /** Needs a first pass over its inputs (so not stdin). */
  twoPass: boolean;
  create(options: PresetOptions): PresetMapper;
}
