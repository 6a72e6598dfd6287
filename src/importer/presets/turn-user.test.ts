import { describe, expect, it } from 'vitest';
import { type HistoryItem, turnUser } from './turn-user.js';

const user = (text?: string): HistoryItem => ({ kind: 'user', text });
const tools: HistoryItem = { kind: 'tools' };
const reply: HistoryItem = { kind: 'reply' };
const other: HistoryItem = { kind: 'other' };

describe('turnUser', () => {
  it('is the last user message after the previous reply', () => {
    expect(turnUser([user('a'), reply, user('b')])).toEqual({
      text: 'b',
      found: true,
      open: false,
      start: 2,
    });
  });

  it('joins the question of each tool round of the turn, oldest first, and only those', () => {
    const history = [user('old'), reply, user('a'), tools, other, user('b'), tools, other, user('c')];
    expect(turnUser(history)).toEqual({ text: 'a\n\nb\n\nc', found: true, open: false, start: 2 });
  });

  it('takes one user message per round: one right before another is not the turn’s', () => {
    expect(turnUser([user('context'), user('a'), tools, other, user('b')]).text).toBe('a\n\nb');
    expect(turnUser([user('context'), user('a')]).text).toBe('a');
  });

  it('keeps tool rounds without new words: the question before them is the turn’s', () => {
    expect(turnUser([reply, user('a'), tools, other, tools, other])).toEqual({
      text: 'a',
      found: true,
      open: false,
      start: 1,
    });
  });

  it('reads a reply at the end as a prefill: the turn is the user message before it', () => {
    expect(turnUser([user('old'), reply, user('Give me JSON'), reply])).toEqual({
      text: 'Give me JSON',
      found: true,
      open: false,
      start: 2,
    });
  });

  it('reads a reply inside a tool round as its preamble, not as an earlier turn', () => {
    expect(turnUser([user('a'), reply, tools, other, user('b')]).text).toBe('a\n\nb');
  });

  it('says when it reached the start, and when the user had no words', () => {
    expect(turnUser([other, tools, other])).toEqual({ text: '', found: false, open: true, start: 0 });
    expect(turnUser([reply, user(undefined)])).toEqual({ text: '', found: true, open: false, start: 1 });
    expect(turnUser([])).toEqual({ text: '', found: false, open: true, start: 0 });
  });
});
