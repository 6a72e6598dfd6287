import { nearestNames } from '../shared/nearest-names.js';

/** The lines `cas chart` and the discovery commands print for a name nothing in the project has. */

/** `"a"`, `"a" or "b"`, `"a", "b" or "c"`. */
export function quoteList(names: readonly string[]): string {
  const quoted = names.map((n) => `"${n}"`);
  if (quoted.length <= 1) return quoted.join('');
  return `${quoted.slice(0, -1).join(', ')} or ${quoted.at(-1)}`;
}

function didYouMean(name: string, known: readonly string[]): string {
  const near = nearestNames(name, known);
  return near.length > 0 ? `; did you mean ${quoteList(near)}?` : '';
}

export function unknownEventLine(name: string, known: readonly string[]): string {
  return `cas: no event named "${name}" in this project${didYouMean(name, known)}`;
}

export function unknownPropertyLine(event: string, property: string, known: readonly string[]): string {
  return `cas: no "${event}" event has a property "${property}" (nor any user a trait of that name)${didYouMean(property, known)}`;
}

export function unknownTraitLine(trait: string, known: readonly string[]): string {
  return `cas: no user has a trait "${trait}"${didYouMean(trait, known)}`;
}

/** `^name$` with RE2's metacharacters escaped, for the `/agg/*` regex parameters. */
export function exactRegex(name: string): string {
  return `^${name.replace(/[\\^$.|?*+()[\]{}]/g, '\\$&')}$`;
}
