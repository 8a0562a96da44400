// An export killed mid-way (SIGKILL, in a real child process) is found at the next start and can be
// undone. Found by an attack: the log record was written only after the copies, so a kill left the
// workspace changed with no record and no undo.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DurableStore } from '@aalis/core';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { Exporter } from './exporter.js';
import type { TaskRecord } from './task.js';

let top: string;
beforeEach(() => {
  top = mkdtempSync(join(tmpdir(), 'h86-export-'));
  chmodSync(top, 0o700);
});
afterEach(() => rmSync(top, { recursive: true, force: true }));

it('records an export before its first write, and undoes one a SIGKILL interrupted', async () => {
  const dataDir = join(top, 'data');
  const work = join(top, 'task', 'work');
  const workspace = join(top, 'ws');
  mkdirSync(join(work, 'out'), { recursive: true });
  for (const n of ['a', 'b', 'c', 'd']) writeFileSync(join(work, 'out', `${n}.txt`), `task ${n}\n`);
  mkdirSync(join(workspace, 'out'), { recursive: true });
  writeFileSync(join(workspace, 'out', 'b.txt'), 'mine\n');
  writeFileSync(join(workspace, 'keep.txt'), 'keep\n');

  const child = spawnSync(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'export-interrupt-child.testing.ts'), dataDir, work, workspace], { encoding: 'utf8', timeout: 60_000 });
  expect(child.signal, child.stderr).toBe('SIGKILL');
  // killed as the third copy began: two files were written, one of them over the user's own
  expect(readFileSync(join(workspace, 'out', 'b.txt'), 'utf8')).toBe('task b\n');
  expect(existsSync(join(workspace, 'out', 'a.txt'))).toBe(true);

  // the next start
  const task = { id: 'pod-1', task: 't', session: 'main', root: work, dirs: { base: work, work, scratch: work, meta: work }, state: 'succeeded', createdAt: 0, steps: 0, progress: '' } as TaskRecord;
  const exporter = new Exporter({ store: await DurableStore.open(dataDir), backupsDir: join(dataDir, 'backups'), lists: { platform: process.platform, control: [], landing: [], denyRead: [] }, task: () => task, workspacesOf: () => [workspace], enabled: true, allowRemember: false, confirmTtlMs: 60_000 });
  const recovered = await exporter.recover();
  expect(recovered).toHaveLength(1);
  expect(recovered[0]).toMatchObject({ interrupted: true, items: [{ action: 'created' }, { action: 'overwritten' }] });
  expect(await exporter.recover()).toEqual([]); // once only
  const [logged] = await exporter.log();
  expect(logged?.id).toBe(recovered[0]?.id);

  await exporter.undo(logged!.id);
  expect(readFileSync(join(workspace, 'out', 'b.txt'), 'utf8')).toBe('mine\n');
  expect(readdirSync(join(workspace, 'out')).sort()).toEqual(['b.txt']);
  expect(readFileSync(join(workspace, 'keep.txt'), 'utf8')).toBe('keep\n');
}, 90_000);
