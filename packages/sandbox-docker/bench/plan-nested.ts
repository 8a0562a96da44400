// The docker plan's cost in a workspace of many nested repositories, each with a core.hooksPath,
// a config-named program and an `.envrc` (what the landings only the host tells are read from:
// mount-plan.ts, phase two), against the same tree without them (the same count of folders and
// files), in interleaved rounds (medians). Printed only. A plan of 1000 such repositories took
// 16 s before its searches went by name (h112); the ratio says what reading them costs now.
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SandboxPolicy } from '@aalis/api-reach';
import { planMounts } from '../src/index.js';

const QUICK = process.env.BENCH_QUICK === '1';
const REPOS = Number(process.env.BENCH_REPOS ?? (QUICK ? 200 : 1000));
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? (QUICK ? 3 : 7));

/** A workspace of `REPOS` folders, each a repository (or, as the baseline, the same files under other names). */
function workspace(repos: boolean): string {
  const ws = realpathSync(mkdtempSync(join(tmpdir(), 'aalis-bench-plan-')));
  for (let i = 0; i < REPOS; i++) {
    const g = join(ws, 'vendor', `r${i}`, repos ? '.git' : 'data');
    mkdirSync(join(g, 'objects'), { recursive: true });
    mkdirSync(join(g, 'refs'));
    writeFileSync(join(g, repos ? 'HEAD' : 'head.txt'), 'ref: refs/heads/main\n');
    writeFileSync(join(g, repos ? 'config' : 'config.txt'), `[core]\n\thooksPath = .githooks\n[alias]\n\tx = !tools/x${i}.sh\n`);
    writeFileSync(join(ws, 'vendor', `r${i}`, repos ? '.envrc' : 'envrc.txt'), 'PATH_add bin\n');
  }
  return ws;
}

const policyOf = (ws: string): SandboxPolicy => ({
  readDeny: [{ pattern: '(.*/)?\\.env[^/]*' }],
  readAllowWithin: [],
  write: [ws],
  writeDeny: [{ pattern: '^.*/\\.git/(?:hooks|config)(?:/.*)?$' }, { pattern: '^.*/\\.envrc$' }],
  writeExceptions: [],
  controlDeny: [],
  network: 'off',
  localPorts: [],
  unixSockets: [],
});

const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)]!;
const timed = async (ws: string) => {
  const start = process.hrtime.bigint();
  await planMounts({ policy: policyOf(ws), cwd: ws });
  return Number(process.hrtime.bigint() - start) / 1e6;
};

const nested = workspace(true);
const plain = workspace(false);
try {
  const a: number[] = [];
  const b: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    a.push(await timed(nested));
    b.push(await timed(plain));
  }
  const m = { nested: median(a), plain: median(b) };
  console.log(`sandbox-docker plan: ${REPOS} nested repositories ${m.nested.toFixed(0)} ms; baseline the same tree without them ${m.plain.toFixed(0)} ms; ratio ${(m.nested / m.plain).toFixed(2)}x (${ROUNDS} interleaved rounds, medians)`);
} finally {
  rmSync(nested, { recursive: true, force: true });
  rmSync(plain, { recursive: true, force: true });
}
