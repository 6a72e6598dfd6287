/** What one item of a logged call's history is to the turn that call answers. */
export type HistoryItem =
  /** A message of the user's: its words (undefined where it has none, as an image alone). */
  | { kind: 'user'; text: string | undefined }
  /** The assistant answering without asking for tools: an earlier turn's reply (or a preamble, below). */
  | { kind: 'reply' }
  /** The assistant asking for tools: a tool round of the turn. */
  | { kind: 'tools' }
  /** Tool results, system messages and anything else that says nothing of the user's. */
  | { kind: 'other' };

/** The user's words a turn answers. */
export interface TurnUser {
  /** Their texts, oldest first, joined by a blank line ('' when the user's messages have no text). */
  text: string;
  /** Whether the history holds a user message of this turn at all. */
  found: boolean;
  /** The walk reached the history's start without an earlier reply: the turn may have begun before it. */
  open: boolean;
  /** Where the turn's part of the history starts: after that reply (0 when open). */
  start: number;
}

/**
 * The user's words a call's reply answers: the last user message, and before it, for each tool round
 * of the same turn, the user message that round followed. A question whose first call only asked
 * for tools, answered by a call whose request sends the tool results with the user's next words, was
 * lost: the turn named only those words, and the call that asked for tools is a usage record with no
 * text (found by probing). A user message right after another is not the turn's: only one per round.
 * The walk stops at the assistant's last reply that asked for no tools; a reply followed by a tool
 * round before the next user message is that round's preamble (the Responses API writes a call's
 * text and its function calls as separate items). Replies at the history's end are a prefill.
 */
export function turnUser(items: readonly HistoryItem[]): TurnUser {
  const texts: string[] = [];
  let found = false;
  let want = true;
  let inRound = false;
  // A request ending in the assistant's words is a prefill the reply continues (forcing JSON, say):
  // the turn answers the user message before it, which was stored empty (found by probing).
  let end = items.length;
  while (end > 0 && items[end - 1]?.kind === 'reply') end--;
  for (let i = end - 1; i >= 0; i--) {
    const item = items[i]!;
    if (item.kind === 'user') {
      if (want) {
        found = true;
        if (item.text !== undefined && item.text !== '') texts.unshift(item.text);
      }
      want = false;
      inRound = false;
    } else if (item.kind === 'tools') {
      want = true;
      inRound = true;
    } else if (item.kind === 'reply' && !inRound) {
      return { text: texts.join('\n\n'), found, open: false, start: i + 1 };
    }
  }
  return { text: texts.join('\n\n'), found, open: true, start: 0 };
}
