// Runs mixpanel-import (installed for the bench only, see mixpanel-import.ts) against a local sink.
// The shim: its job URL is a getter of api.mixpanel.com; the bench points it at the sink. Nothing
// else of the tool is changed. Prints one JSON line: records, seconds, cpu seconds, peak RSS (MB).
const [, , moduleDir, file, sinkUrl, dryRun] = process.argv;
const path = require('node:path');
const Job = require(path.join(moduleDir, 'components', 'job.js'));
const JobClass = Job.default ?? Job;
Object.defineProperty(JobClass.prototype, 'url', { get: () => `${sinkUrl}/import`, configurable: true });
const mp = require(moduleDir);
const turn = (r) => ({
  event: 'Conversation Turn',
  properties: {
    time: Date.parse(r.timestamp),
    distinct_id: r.user_id,
    $insert_id: `${r.session_id}:${r.timestamp}`,
    session_id: r.session_id,
    conversation_id: r.conversation_id,
    user: r.user,
    assistant: r.assistant,
    model: r.model,
    prompt_tokens: Number(r.prompt_tokens),
    completion_tokens: Number(r.completion_tokens),
  },
});
(async () => {
  const started = process.hrtime.bigint();
  const cpu0 = process.cpuUsage();
  const result = await mp({ secret: 'bench', project: 'bench' }, file, {
    recordType: 'event',
    workers: 10,
    recordsPerBatch: 2000,
    // Its JSONL reader reads the file `highWater` bytes at a time, and highWater defaults to
    // min(workers * 10, 500) objects: 100 bytes a read here, which made its JSONL 15-19x slower than
    // its CSV (300k turns: dry run 75.7 s against 4.05 s with this value, sending 3,954 against
    // 56,128 events/s); its CSV reader is not affected (4 alternated dry runs each: no difference).
    highWater: 16384,
    compress: false,
    transport: 'got',
    strict: false,
    logs: false,
    verbose: false,
    showProgress: false,
    fixData: false,
    removeNulls: false,
    dryRun: dryRun === 'dry',
    streamFormat: file.endsWith('.csv') ? 'csv' : 'jsonl',
    transformFunc: turn,
  });
  const cpu = process.cpuUsage(cpu0);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const records = dryRun === 'dry' ? (result.dryRun?.length ?? result.total ?? 0) : (result.success ?? 0);
  console.log(JSON.stringify({ records, total: result.total, seconds, cpu: (cpu.user + cpu.system) / 1e6 }));
})().catch((error) => {
  console.error(error?.message ?? String(error));
  process.exit(1);
});
