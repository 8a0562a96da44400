// Kills a daemon that approves with "remember" in a loop at random moments, then restarts on
// what it left and checks the grants against the audit log. Shared by the kill test (a few
// rounds) and bench/grant-kills.ts (as many rounds as asked).
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import type { AuditRecord } from '../src/index.js';
import { scopeOf } from '../src/index.js';
import { startKernel } from './harness.js';

const LOOPER = join(import.meta.dirname, '..', 'src', 'fixtures', 'grant-looper.ts');

/** Starts the looping approver on `dir`, lets it run `ms`, and SIGKILLs it. */
export async function killLooperAfter(dir: string, ms: number): Promise<void> {
  const child = spawn(process.execPath, ['--import', 'tsx', LOOPER, dir], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      if (out.includes('looping\n')) resolve();
    });
    child.once('error', reject);
    void exited.then((code) => reject(new Error(`grant-looper exited early with ${code}`)));
  });
  await new Promise((r) => setTimeout(r, ms));
  child.kill('SIGKILL');
  await exited;
}

/** The grants the audit log says are in force: created by an approval, never revoked or dropped since. */
export function grantsInAudit(records: readonly AuditRecord[]): Map<string, string> {
  const live = new Map<string, string>();
  for (const r of records) {
    if (r.event === 'resolved' && r.outcome === 'approved' && r.via !== 'grant' && r.grantId !== undefined) live.set(r.grantId, scopeOf(r.subject)?.target ?? '');
    if (r.event === 'grant-revoked' || r.event === 'grant-dropped') live.delete(r.grantId);
  }
  return live;
}

/** What one restart after a kill found. */
export interface RoundFindings {
  /** Grants the restarted daemon honours, by id, with their target. */
  readonly honoured: Map<string, string>;
  /** Grants the audit log shows in force after the restart. */
  readonly audited: Map<string, string>;
  /** How many of the honoured grants' targets a new ask approved without showing it. */
  readonly silent: number;
}

/** Restarts on `dir` (recovery runs), lists what is honoured, and asks again for each honoured target. */
export async function restartAndCheck(dir: string, session = 'conv'): Promise<RoundFindings> {
  const h = await startKernel({ dir });
  const honoured = new Map(h.desk.grants.list(session).map((g) => [g.id, g.scope.target]));
  let silent = 0;
  try {
    for (const target of honoured.values()) {
      const outcome = await h.gate.ask({
        turn: { session: { id: session }, platform: 'chat', speaker: { platform: 'chat', userId: 'owner' }, authorised: { platform: 'chat', userId: 'owner' }, inbound: { id: 'check' }, category: 'own' },
        subject: { kind: 'write-path', path: target, rule: 'boundary' },
        summary: `write ${target}`,
        rememberable: true,
      });
      if (outcome.outcome === 'approved' && outcome.remembered) silent++;
    }
  } finally {
    await h.kernel.stop();
  }
  return { honoured, audited: grantsInAudit(await h.audit()), silent };
}
