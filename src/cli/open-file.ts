import { spawn } from 'node:child_process';

/**
 * `cas report --open`: the system's own opener, and only where a person can see what it opens. On
 * Linux that needs a display (an SSH session or CI has none, and xdg-open there would start a
 * text browser or fail); macOS and Windows always have one.
 */

export interface Opener {
  command: string;
  args: string[];
}

export function openerFor(
  path: string,
  platform: NodeJS.Platform,
  env: Readonly<Record<string, string | undefined>>,
): Opener | undefined {
  if (platform === 'darwin') return { command: 'open', args: [path] };
  // `start` is a cmd.exe built-in; its first quoted argument is the window title, hence the "".
  if (platform === 'win32') return { command: 'cmd', args: ['/c', 'start', '""', path] };
  if (env.DISPLAY || env.WAYLAND_DISPLAY) return { command: 'xdg-open', args: [path] };
  return undefined;
}

/** Starts the opener detached; false when it could not be started (no xdg-open installed). */
export function startOpener(opener: Opener): Promise<boolean> {
  return new Promise((resolve) => {
    const child = spawn(opener.command, opener.args, { detached: true, stdio: 'ignore' });
    child.once('error', () => resolve(false));
    child.once('spawn', () => {
      child.unref();
      resolve(true);
    });
  });
}
