/**
 * Conversation ids are scoped to their session (decisions §4 as amended by issue 17): the hosted
 * Python client sends the literal `"None"` when its caller gives no id, so the same id in two
 * sessions names two conversations. Everything that keys a conversation (the project cache, the
 * hash filter of stored conversations, the UPDATE of stored rows) uses this one key, built the same
 * way in memory and in SQL.
 *
 * The session id's length in UTF-8 bytes comes first, so the pair maps to one key whatever the ids
 * hold (a plain separator would not do: ids are free text, NUL included). DuckDB's `strlen` counts
 * the same bytes as `Buffer.byteLength`, strings being valid UTF-8 (lone surrogates are refused).
 */
export type ConversationKey = string & { readonly __conversationKey: unique symbol };

export function conversationKey(sessionId: string, conversationId: string): ConversationKey {
  return `${Buffer.byteLength(sessionId, 'utf8')}:${sessionId}${conversationId}` as ConversationKey;
}

/** The key of a conversation state (or anything naming its session and id). */
export function keyOf(c: { sessionId: string; id: string }): ConversationKey {
  return conversationKey(c.sessionId, c.id);
}

/** The same key as SQL over a row's `session_id` and `conversation_id` columns (optionally aliased). */
export function conversationKeySql(alias?: string): string {
  const at = alias === undefined ? '' : `${alias}.`;
  return `(strlen(${at}session_id)::VARCHAR || ':' || ${at}session_id || ${at}conversation_id)`;
}
