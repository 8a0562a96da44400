/*
 * Run by unprivileged.test.ts as the `nobody` user: the same service, the same scene, no root.
 * Prints what each probe command did, as JSON. argv: the scene, then the ports of two listeners on
 * the host's 127.0.0.1 (the first one is made a localPort).
 */
import type { SandboxPolicy } from '@aalis/api-reach';
import { basename } from 'node:path';
import { findSystemTool } from './loopback-filter.js';
import { USER_STEP_PY } from './root-map.helper.js';
import { req, type Scene, workspacePolicy } from './scene.testing.js';
import { createLinuxSandbox } from './service.js';

const s = JSON.parse(process.argv[2]!) as Scene;
const { denied, other } = JSON.parse(process.argv[3]!) as { denied: number; other: number };
// the test runs it with both launcher settings (`all`: the launcher's child mounts the overlays)
const sb = createLinuxSandbox({ launcher: process.env.AALIS_TEST_LAUNCHER === 'all' ? 'all' : 'on' });
const env = { PATH: '/usr/bin:/bin', HOME: s.home, LANG: 'C' };
const runArgv = async (argv: [string, ...string[]], policy: Partial<SandboxPolicy> = {}) => {
  const r = await sb.run(req(s, argv, { env, policy: workspacePolicy(s, policy) }));
  return { out: r.stdout.trim(), exit: r.exitCode, denied: r.writeDenied };
};
const run = (cmd: string, network: 'off' | 'on' = 'off') => runArgv(['sh', '-c', cmd], { network });
const connect = `
import socket, sys
for p in sys.argv[1:]:
    try:
        c = socket.create_connection(('10.0.2.2', int(p)), timeout=3); print(c.recv(10).decode().strip())
    except Exception as e:
        print(type(e).__name__)
`;
const nft = findSystemTool('nft') ?? 'nft';
// which step mounts the overlays: the shell step (unshare(1)) or python's user_step (root-map.helper.ts)
const planned = (await sb.plan(req(s, ['true'], { env, policy: workspacePolicy(s) }))).argv;
const out = {
  step: planned.includes(USER_STEP_PY) ? 'user_step' : basename(planned[0] ?? ''),
  available: (await sb.probe()).available,
  id: await run('id -u'),
  tmp: await run('echo kept > /tmp/nobody-tmp; echo "$TMPDIR"'),
  write: await run('echo ok > src/nobody.txt && cat src/nobody.txt'),
  hook: await run('echo x > .git/hooks/pre-commit'),
  env: await run('cat .env'),
  key: await run(`cat ${s.home}/.ssh/id_ed25519`),
  envrc: await run('echo x > .envrc'),
  network: await run('ip -o link | grep -c tap0', 'on'),
  // the command tries to remove the rules, then connects: the localPort stays refused, the other answers
  filter: await runArgv(['sh', '-c', `${nft} flush ruleset 2>/dev/null; echo flush=$?; exec "$@"`, 'sh', 'python3', '-c', connect, String(denied), String(other)], {
    network: 'on',
    localPorts: [denied],
  }),
};
process.stdout.write(JSON.stringify(out), () => process.exit(0));
