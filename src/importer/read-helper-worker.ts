import { parentPort, workerData } from 'node:worker_threads';
import { ExternalSorter } from './external-sort.js';
import type { HelperAnswer, HelperRequest, HelperStart } from './read-helper.js';
import { planAccess } from './record-access.js';
import { stageBatch } from './stage-batch.js';

/**
 * The read helper's thread: maps and stages the batches it is handed into a sorter of its own,
 * whose runs the reading thread merges with its own (read-helper.ts). Batches are taken one at a
 * time, in the order they came, as a spill must finish before the next batch is held.
 */
const port = parentPort;
if (port) {
  const start = workerData as HelperStart;
  const plan = planAccess(start.spec);
  const sorter = new ExternalSorter({ parent: start.dir, budgetBytes: start.budgetBytes });
  const answer = (a: HelperAnswer): void => port.postMessage(a);
  const handle = async (m: HelperRequest): Promise<void> => {
    if (m.type === 'batch') {
      const result = stageBatch(m.batch, plan, start.keepRaw, sorter);
      if (sorter.full) await sorter.spill();
      answer({ type: 'batch', id: m.id, ...result });
    } else {
      await sorter.spillRest();
      answer({ type: 'runs', runs: [...sorter.runFiles] });
    }
  };
  let chain = Promise.resolve();
  port.on('message', (m: HelperRequest) => {
    chain = chain
      .then(() => handle(m))
      .catch((error: unknown) =>
        answer({ type: 'failed', message: error instanceof Error ? error.message : String(error) }),
      );
  });
  answer({ type: 'ready' });
}
