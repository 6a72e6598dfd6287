import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { processAlive } from './connect.js';

describe('processAlive', () => {
  it('is true of a running process and false of one that ended but was not reaped (a zombie)', async () => {
    if (process.platform !== 'linux') return;
    // The shell starts a short sleep, then becomes a long one that never reaps it.
    const parent = spawn('sh', ['-c', 'sleep 0.1 & echo $!; exec sleep 10'], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    try {
      const [line] = (await once(parent.stdout, 'data')) as [Buffer];
      const pid = Number(line.toString().trim());
      expect(processAlive(parent.pid!)).toBe(true);
      await sleep(600);
      // Signal 0 still reaches it: only its state tells it has ended.
      expect(() => process.kill(pid, 0)).not.toThrow();
      expect(processAlive(pid)).toBe(false);
    } finally {
      parent.kill('SIGKILL');
    }
  });
});
