// Profile generation time for realistic policies, against a baseline measured in the same run
// (JSON.stringify of the same policy: the cost of merely walking and writing it out). Steady state
// is what a daemon sees (pattern translations cached); "first call" includes translating them.
import { protectedLists, type SandboxPolicy } from '@aalis/api-reach';
import { seatbeltInvocation, seatbeltProfile } from '../src/seatbelt-profile.js';
import { readonlyPolicy, workspacePolicy } from '../test/policies.js';
import { recordFigure } from '../../../test/bench/record-figure.js';

function measure(run: () => unknown, minMs = 400): { perOpUs: number; ops: number } {
  for (let i = 0; i < 50; i++) run(); // warm up
  let ops = 0;
  const start = process.hrtime.bigint();
  let elapsed = 0;
  while (elapsed < minMs) {
    for (let i = 0; i < 20; i++) run();
    ops += 20;
    elapsed = Number(process.hrtime.bigint() - start) / 1e6;
  }
  return { perOpUs: (elapsed * 1000) / ops, ops };
}

const data = '/Users/ana/.aalis';
const lists = protectedLists({
  paths: { install: '/Users/ana/aalis', data, workspace: `${data}/workspace`, tmp: `${data}/tmp`, self: `${data}/self`, logs: `${data}/logs`, config: `${data}/config.yaml`, secrets: `${data}/secrets.yaml`, deployment: '/Users/ana' },
  userHome: '/Users/ana',
  platform: 'darwin',
  form: 'npm',
  codeDirs: [],
});
const realLists: SandboxPolicy = { ...workspacePolicy, readDeny: lists.denyRead, writeDeny: lists.landing, controlDeny: lists.control };

const cases: [string, SandboxPolicy][] = [
  ['readonly (fixture)', readonlyPolicy],
  ['workspace (fixture)', workspacePolicy],
  ["workspace (api-reach's darwin lists)", realLists],
];
console.log('@aalis/sandbox-darwin: seatbeltProfile generation');
const cold = new Map(cases.map(([name, policy]) => {
  const start = process.hrtime.bigint();
  seatbeltProfile(policy);
  return [name, Number(process.hrtime.bigint() - start) / 1000] as const;
}));
// Warm the JIT on every case before any is measured, so the first case is not charged for it.
for (let i = 0; i < 300; i++) for (const [, policy] of cases) seatbeltProfile(policy);
for (const [name, policy] of cases) {
  const rules = policy.readDeny.length + policy.writeDeny.length + policy.writeExceptions.length + policy.controlDeny.length + policy.write.length + policy.readAllowWithin.length;
  const coldUs = cold.get(name)!;
  const baseline = measure(() => JSON.stringify(policy));
  const profile = measure(() => seatbeltProfile(policy));
  const invocation = measure(() => seatbeltInvocation(policy));
  const bytes = Buffer.byteLength(seatbeltProfile(policy));
  console.log(
    `  ${name.padEnd(38)} ${String(rules).padStart(3)} rules  ${profile.perOpUs.toFixed(1).padStart(8)} µs/profile  (${bytes} bytes)` +
      `  first call ${coldUs.toFixed(0)} µs  baseline JSON.stringify ${baseline.perOpUs.toFixed(2)} µs  ratio ${(profile.perOpUs / baseline.perOpUs).toFixed(0)}x` +
      `  with -D parameters (what runs) ${invocation.perOpUs.toFixed(1)} µs`,
  );
  if (policy === realLists) recordFigure({ id: 'sandbox-darwin.profile', what: "a Seatbelt profile from api-reach's darwin lists (steady state)", candidate: profile.perOpUs, baseline: { what: '`JSON.stringify` of the same policy', value: baseline.perOpUs }, unit: 'µs', rounds: profile.ops });
}
