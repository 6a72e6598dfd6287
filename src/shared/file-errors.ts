/**
 * Why a file could not be read or written, in words where the error code alone would puzzle a user
 * (no such file, permission denied, a folder), else its code (`ELOOP`, …).
 */
export function fileErrorReason(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return 'no such file';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'EISDIR') return 'it is a folder';
  return (code === undefined ? undefined : PATH_PROBLEMS[code]) ?? code ?? String(error);
}

/** Errors of the path itself, not of the disk or the file: the user's to mend. */
const PATH_PROBLEMS: Readonly<Record<string, string>> = {
  ENAMETOOLONG: 'a name in the path is too long',
  ELOOP: 'its symbolic links form a loop',
  ENOTDIR: 'a part of the path is a file, not a folder',
};

/**
 * A path the system refused as written (too long a name, a loop of links, a file where a folder
 * should be), in words with the path shortened; undefined for any other failure. These were
 * "this is a bug" from wherever the path was first used (found by probing).
 */
export function pathProblem(error: unknown): string | undefined {
  const { code, path } = (error ?? {}) as NodeJS.ErrnoException;
  const words = code === undefined ? undefined : PATH_PROBLEMS[code];
  if (words === undefined || typeof path !== 'string') return undefined;
  const shown = path.length > 120 ? `${path.slice(0, 60)}…${path.slice(-40)}` : path;
  return `cannot use ${shown}: ${words}`;
}
