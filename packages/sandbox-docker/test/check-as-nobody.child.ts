/*
 * The plan, a command's writes and the check after the run with its removal, as the uid this
 * process runs as (nobody, for a daemon that is not root, whose containers write as it). Run from
 * source (`--conditions=aalis-source --import tsx`): a fresh clone has no dist/. Prints what the
 * check found and what was left, as JSON.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { removeAll } from '../src/docker-sandbox.js';
import { deniedWritesAfter, planMounts } from '../src/mount-plan.js';

const { policy, ws, writes, probe, before } = JSON.parse(process.argv[2]!) as { policy: Parameters<typeof planMounts>[0]['policy']; ws: string; writes: string; probe: string; before: string };
if (before) execFileSync('sh', ['-c', before], { cwd: ws });
const plan = await planMounts({ policy, cwd: ws });
execFileSync('sh', ['-c', writes], { cwd: ws });
const after = await deniedWritesAfter(plan);
const failed = await removeAll(after.denied);
const left = execFileSync('sh', ['-c', 'find "$0" -name "$1" 2>/dev/null; true', ws, probe], { encoding: 'utf8' }).split('\n').filter((l) => l !== '');
const tell = (f: () => string) => {
  try {
    return f();
  } catch (e) {
    return (e as NodeJS.ErrnoException).code ?? 'error';
  }
};
const modeOf = tell(() => (statSync(`${ws}/cfg2/vault`).mode & 0o7777).toString(8));
const readBack = tell(() => readFileSync(`${ws}/q/.envrc`, 'utf8'));
console.log(JSON.stringify({ modeOf, readBack, denied: after.denied.map((d) => d.path.slice(0, 300)), unlisted: after.unlisted, failed: failed.map((f) => f.slice(-200)), notes: (after.notes ?? []).map((n) => n.slice(0, 300)), left }));
