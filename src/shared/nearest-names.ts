/**
 * "Did you mean": the known names nearest to a mistyped one. Distance is Damerau-Levenshtein in its
 * optimal-string-alignment form (insert, delete, substitute, swap two neighbours: "Trun" → "Turn" is
 * one edit), computed on lower-cased text so a name that differs only in case is the nearest of all.
 * Pure, no I/O: the CLI's chart hints and any listing command can use it.
 */

/** Edits between `a` and `b` (code points, compared as given). */
export function editDistance(a: string, b: string): number {
  const s = [...a];
  const t = [...b];
  if (s.length === 0) return t.length;
  if (t.length === 0) return s.length;
  // Three rows suffice: a transposition looks two rows back.
  let before: number[] = [];
  let previous = Array.from({ length: t.length + 1 }, (_, j) => j);
  for (let i = 1; i <= s.length; i++) {
    const current = [i];
    for (let j = 1; j <= t.length; j++) {
      const cost = s[i - 1] === t[j - 1] ? 0 : 1;
      let d = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost);
      if (i > 1 && j > 1 && s[i - 1] === t[j - 2] && s[i - 2] === t[j - 1]) {
        d = Math.min(d, (before[j - 2] ?? 0) + 1);
      }
      current.push(d);
    }
    before = previous;
    previous = current;
  }
  return previous[t.length] ?? 0;
}

/**
 * How far a suggestion may be: about a third of the typed name, 1 to 4 edits, so "plna" finds "plan"
 * (one swap), "a" does not suggest every short name, and a long name is not matched by another long
 * name that merely shares a prefix.
 */
export function defaultMaxDistance(name: string): number {
  return Math.min(4, Math.max(1, Math.floor(([...name].length + 1) / 3)));
}

export interface NearestOptions {
  /** At most this many names (default 3). */
  limit?: number;
  /** Edits allowed (default `defaultMaxDistance(name)`). */
  maxDistance?: number;
}

/**
 * The known names within reach of `name`, nearest first (ties in plain code-unit order, so the
 * answer does not depend on the order `known` came in). `name` itself is never suggested; when
 * names differ from it only in case, they are the whole answer (the person knew the name).
 */
export function nearestNames(name: string, known: Iterable<string>, options: NearestOptions = {}): string[] {
  const limit = options.limit ?? 3;
  const reach = options.maxDistance ?? defaultMaxDistance(name);
  const lower = name.toLowerCase();
  const scored: Array<{ name: string; distance: number }> = [];
  for (const candidate of new Set(known)) {
    if (candidate === name) continue;
    const distance = editDistance(lower, candidate.toLowerCase());
    if (distance <= reach) scored.push({ name: candidate, distance });
  }
  if (scored.some((s) => s.distance === 0))
    return scored
      .filter((s) => s.distance === 0)
      .map((s) => s.name)
      .sort()
      .slice(0, limit);
  scored.sort((a, b) => a.distance - b.distance || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return scored.slice(0, limit).map((s) => s.name);
}
