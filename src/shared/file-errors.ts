/**
 * Why a file could not be read or written, in words where the error code alone would puzzle a user
 * (no such file, permission denied, a folder), else its code (`ELOOP`, …).
 */
export function fileErrorReason(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return 'no such file';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'EISDIR') return 'it is a folder';
  return code ?? String(error);
}
