import { anthropic } from './anthropic.js';
import { chatgpt } from './chatgpt.js';
import { claude } from './claude.js';
import { openaiChat } from './openai-chat.js';
import { openaiResponses } from './openai-responses.js';
import { otlp } from './otlp.js';
import type { Preset, PresetName } from './preset.js';

export { isPresetName, PRESET_NAMES, type Preset, type PresetName } from './preset.js';

/** `cas import --preset <name>`: each format's mapping module. */
export const PRESETS: Readonly<Record<PresetName, Preset>> = {
  chatgpt,
  claude,
  'openai-chat': openaiChat,
  'openai-responses': openaiResponses,
  anthropic,
  otlp,
};
