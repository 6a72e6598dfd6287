import { parentPort, workerData } from 'node:worker_threads';
import { type SizeFiles, writeSizeFiles } from './import-data.js';

/**
 * Writes one size's bench files on its own thread (bench/import.ts): the largest size took about as
 * long as all the others together, one after the other on one thread.
 */
parentPort?.postMessage(await writeSizeFiles(workerData as SizeFiles));
