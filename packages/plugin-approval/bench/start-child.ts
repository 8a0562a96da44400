// One daemon-like start of the approval plugin on a data directory, in its own process (so its
// peak memory is its own): prints {"ms", "rssMb"} as JSON. argv: dataDir maxBytes.
import { performance } from 'node:perf_hooks';
import { authorityPlugin, createKernel, sessionsPlugin } from '@aalis/core';
import { approvalPlugin } from '../src/index.js';

const [dataDir = '', maxBytes = String(64 * 1024 * 1024)] = process.argv.slice(2);
const start = performance.now();
const kernel = createKernel({ dataDir })
  .use(sessionsPlugin)
  .use(authorityPlugin, { owners: { chat: ['owner'] } })
  .use(approvalPlugin, { auditLog: { maxBytes: Number(maxBytes) } });
const status = await kernel.start();
const failed = status.filter((s) => s.state === 'failed');
if (failed.length > 0) {
  process.stderr.write(`the kernel did not start: ${JSON.stringify(failed)}\n`);
  process.exit(1);
}
const ms = performance.now() - start;
await kernel.stop();
process.stdout.write(`${JSON.stringify({ ms, rssMb: process.resourceUsage().maxRSS / 1024 })}\n`);
