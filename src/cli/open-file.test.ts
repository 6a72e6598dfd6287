import { describe, expect, it } from 'vitest';
import { openerFor } from './open-file.js';

describe('which opener cas report --open uses', () => {
  it('xdg-open on Linux only with a display (X11 or Wayland)', () => {
    expect(openerFor('/r.html', 'linux', { DISPLAY: ':0' })).toEqual({
      command: 'xdg-open',
      args: ['/r.html'],
    });
    expect(openerFor('/r.html', 'linux', { WAYLAND_DISPLAY: 'wayland-0' })).toMatchObject({
      command: 'xdg-open',
    });
    expect(openerFor('/r.html', 'linux', {})).toBeUndefined();
    expect(openerFor('/r.html', 'linux', { DISPLAY: '' })).toBeUndefined();
    expect(openerFor('/r.html', 'freebsd', {})).toBeUndefined();
  });

  it('open on macOS and start on Windows, which always have a desktop', () => {
    expect(openerFor('/r.html', 'darwin', {})).toEqual({ command: 'open', args: ['/r.html'] });
    expect(openerFor('C:\\r.html', 'win32', {})).toEqual({
      command: 'cmd',
      args: ['/c', 'start', '""', 'C:\\r.html'],
    });
  });
});
