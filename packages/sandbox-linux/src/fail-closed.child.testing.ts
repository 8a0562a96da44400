/*
 * Run by fail-closed.test.ts inside an outer bubblewrap whose user namespace forbids further user
 * namespaces: the condition of a kernel with them disabled (or Ubuntu's AppArmor restriction).
 * Prints the probe and what a run did, as JSON.
 */
import { existsSync } from 'node:fs';
import { createLinuxSandbox } from './service.js';

const [cwd, marker] = process.argv.slice(2) as [string, string];
const sb = createLinuxSandbox();
const probe = await sb.probe();
let run: unknown;
try {
  await sb.run({
    argv: ['touch', marker],
    cwd,
    env: { PATH: '/usr/bin:/bin' },
    timeoutMs: 10_000,
    policy: { readDeny: [], readAllowWithin: [], write: [cwd], writeDeny: [], writeExceptions: [], controlDeny: [], network: 'off', localPorts: [], unixSockets: [] },
  });
  run = { ran: true };
} catch (e) {
  const err = e as { name: string; reason?: string; fix?: string };
  run = { name: err.name, reason: err.reason, fix: err.fix };
}
process.stdout.write(JSON.stringify({ probe, run, markerWritten: existsSync(marker) }), () => process.exit(0));
