/**
 * Which event of a refused batch an issue names: `[3].properties.user` → 3 (undefined: none, the
 * batch as a whole). The client library, the importer and the OTLP receiver each take a refused
 * batch apart by it. No imports: the library loads it without zod.
 */
export function issueIndex(path: string): number | undefined {
  const m = /^\[(\d+)\]/.exec(path);
  return m ? Number(m[1]) : undefined;
}

/** The issue's path without its event's index: `[3].properties.user` → `properties.user`. */
export function issueField(path: string): string {
  return path.replace(/^\[\d+\]\.?/, '');
}
