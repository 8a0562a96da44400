// Run by export-interrupt.test.ts in a child process: exports four files and is SIGKILLed by its
// own temp journal as the third copy begins, as a daemon killed mid-export would be.
import { DurableStore } from '@aalis/core';
import { Exporter } from './exporter.js';
import type { TaskRecord } from './task.js';

const [dataDir, work, workspace] = process.argv.slice(2) as [string, string, string];
const task = { id: 'pod-1', task: 't', session: 'main', root: work, dirs: { base: work, work, scratch: work, meta: work }, state: 'succeeded', createdAt: 0, steps: 0, progress: '' } as TaskRecord;
const store = await DurableStore.open(dataDir);
let copies = 0;
const exporter = new Exporter({
  store,
  backupsDir: `${dataDir}/backups`,
  lists: { platform: process.platform, control: [], landing: [], denyRead: [] },
  task: () => task,
  workspacesOf: () => [workspace],
  enabled: true,
  allowRemember: false,
  confirmTtlMs: 60_000,
  journal: {
    record: async () => {
      if (++copies === 3) process.kill(process.pid, 'SIGKILL');
    },
    done: () => {},
  },
});
const start = await exporter.start({ taskId: 'pod-1', files: ['out'], to: workspace, mode: 'copy', onClash: 'overwrite' } as never);
if (start.state !== 'needs-confirmation') throw new Error('expected a plan');
await exporter.confirm({ token: start.token });
console.log('finished without being killed');
