import type { Command } from 'commander';

/**
 * `cas help chrat` (or `cas users help lst`) printed nothing and exited 2: commander's help command
 * given a name it does not know fails without a word (found by probing). Such a `help <name>` is read
 * as `<name>` itself, whose error names the command and the nearest one ("Did you mean chart?"). Only
 * command words are walked: after the first flag or argument, `help` is a value, not the command.
 */
export function helpOfUnknown(program: Command, argv: readonly string[]): string[] {
  const out = [...argv];
  let current = program;
  for (let i = 2; i < out.length; i++) {
    const word = out[i] ?? '';
    const known = (name: string) =>
      current.commands.find((c) => c.name() === name || c.aliases().includes(name));
    if (word === 'help' && current.commands.length > 0 && i + 1 < out.length) {
      const name = out[i + 1] ?? '';
      if (!name.startsWith('-') && known(name) === undefined) out.splice(i, 1);
      return out;
    }
    const next = known(word);
    if (next === undefined) return out;
    current = next;
  }
  return out;
}
