import { arr, count, type Obj, obj, str } from './fields.js';

interface ToolCall {
  id?: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/**
 * A streamed Chat Completions call logged as its list of `chat.completion.chunk` objects, as the
 * `chat.completion` they make: the deltas' text, refusal and tool calls (their pieces joined by
 * `index`), the last `finish_reason`, and the usage of the chunk that has it (with
 * `stream_options.include_usage`). A string says why the list is not one. Such a log was refused as
 * "no response in this line" (found by probing).
 */
export function assembleChunks(chunks: readonly unknown[]): Obj | string {
  const all = chunks.map(obj);
  const first = all[0];
  if (!first || all.some((c) => c?.object !== 'chat.completion.chunk'))
    return 'a list that is not of chat.completion.chunk objects (a streamed call, as its chunks)';
  let content = '';
  let refusal = '';
  let finish: unknown = null;
  let usage: unknown;
  const tools: ToolCall[] = [];
  for (const chunk of all) {
    if (obj(chunk?.usage)) usage = chunk?.usage;
    // The usage chunk of `include_usage` has no choices.
    const choice = obj(arr(chunk?.choices)[0]);
    if (!choice) continue;
    if (choice.finish_reason !== undefined && choice.finish_reason !== null) finish = choice.finish_reason;
    const delta = obj(choice.delta);
    if (!delta) continue;
    if (typeof delta.content === 'string') content += delta.content;
    if (typeof delta.refusal === 'string') refusal += delta.refusal;
    for (const value of arr(delta.tool_calls)) {
      const piece = obj(value);
      if (!piece) continue;
      // A call's pieces share its index (0, 1, …); one past the next slot starts the next call, so a
      // wild index makes no vast sparse list.
      const index = Math.min(count(piece.index) ?? tools.length, tools.length);
      tools[index] ??= { type: 'function', function: { name: '', arguments: '' } };
      const call = tools[index];
      const id = str(piece.id);
      if (id !== undefined) call.id = id;
      const fn = obj(piece.function);
      if (typeof fn?.name === 'string') call.function.name += fn.name;
      if (typeof fn?.arguments === 'string') call.function.arguments += fn.arguments;
    }
  }
  const calls = tools.filter((t) => t !== undefined);
  const message: Obj = {
    role: 'assistant',
    content: content === '' && (calls.length > 0 || refusal !== '') ? null : content,
    ...(refusal === '' ? {} : { refusal }),
    ...(calls.length > 0 ? { tool_calls: calls } : {}),
  };
  return {
    id: first.id,
    object: 'chat.completion',
    created: first.created,
    model: first.model,
    choices: [{ index: 0, message, finish_reason: finish }],
    ...(usage === undefined ? {} : { usage }),
  };
}
