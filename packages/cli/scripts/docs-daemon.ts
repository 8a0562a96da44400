// Regenerates DAEMON.md's payload tables from src/daemon/payloads.ts: `pnpm --filter @aalis/cli docs:daemon`.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { withPayloadTables } from '../src/daemon/payload-docs.js';

const file = join(import.meta.dirname, '..', 'DAEMON.md');
const before = readFileSync(file, 'utf8');
const after = withPayloadTables(before);
if (after === before) console.log('DAEMON.md: the payload tables are up to date.');
else {
  writeFileSync(file, after);
  console.log('DAEMON.md: the payload tables were regenerated.');
}
