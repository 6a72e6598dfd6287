/**
 * Why a file could not be read or written, in words where the error code alone would puzzle a user
 * (permission denied, a folder), else its code (`ENOENT`, …).
 */
export function fileErrorReason(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'EISDIR') return 'it is a folder';
  return code ?? String(error);
}
