import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PAYLOADS_BEGIN, PAYLOADS_END, payloadTables, withPayloadTables } from './payload-docs.js';
import { DOCUMENTED_PAYLOADS } from './payload-docs.js';

const DAEMON_MD = join(import.meta.dirname, '..', '..', 'DAEMON.md');

describe("DAEMON.md's payload tables", () => {
  it('are the ones the schemas make (run `pnpm --filter @aalis/cli docs:daemon` when this fails)', () => {
    const doc = readFileSync(DAEMON_MD, 'utf8');
    const begin = doc.indexOf(PAYLOADS_BEGIN);
    const end = doc.indexOf(PAYLOADS_END);
    expect(begin).toBeGreaterThan(0);
    expect(doc.slice(begin, end + PAYLOADS_END.length)).toBe(payloadTables());
  });

  it('name every documented payload and every field of a schema, so a new field shows up as a difference', () => {
    const tables = payloadTables();
    for (const [title] of DOCUMENTED_PAYLOADS) expect(tables).toContain(`#### ${title}`);
    for (const field of ['`turn`', '`callId`', '`decision`', '`principal`', '`tools[].parameters`', '`outcome`', '`via`', '`sessionId`', '`events`']) expect(tables).toContain(`| ${field} |`);
    expect(tables).toMatch(/\| `approvedBy` \| refused \|/);
  });

  it('refuses a document without the markers', () => {
    expect(() => withPayloadTables('# no markers')).toThrow(/no generated part/);
  });
});
