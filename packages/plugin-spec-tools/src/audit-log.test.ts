// The tools audit log on a real file: a line cut by a kill mid-write costs only that line.
import { appendFileSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AUDIT_FILE, ToolsAuditLog } from './audit-log.js';
import { tempDir } from './spec-tools.testing.js';

describe('ToolsAuditLog', () => {
  it('after a cut last line (a daemon killed mid-write), the next entry starts on its own line and both whole entries read back', async () => {
    const dir = tempDir();
    const log = new ToolsAuditLog(dir);
    await log.append({ who: 'chat:owner', action: 'create', tool: 'a', result: 'started' });
    appendFileSync(join(dir, AUDIT_FILE), '{"ts":"2026-01-01T00:00:00Z","who":"chat:ow');
    await log.append({ who: 'chat:owner', action: 'create', tool: 'a', result: 'ok' });
    expect((await log.read()).map((e) => e.result)).toEqual(['started', 'ok']);
    expect(readFileSync(join(dir, AUDIT_FILE), 'utf8').split('\n').filter(Boolean)).toHaveLength(3);
  });

  it('refuses to append through a symlink at its name', async () => {
    const dir = tempDir();
    const elsewhere = join(tempDir(), 'victim');
    writeFileSync(elsewhere, 'untouched\n');
    symlinkSync(elsewhere, join(dir, AUDIT_FILE));
    await expect(new ToolsAuditLog(dir).append({ who: 'x', action: 'delete', tool: 't', result: 'started' })).rejects.toThrow();
    expect(readFileSync(elsewhere, 'utf8')).toBe('untouched\n');
  });
});
