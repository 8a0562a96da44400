import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { type SandboxPolicy, sandboxPolicyOf } from '@aalis/api-reach';
import { reachInspector } from '@aalis/plugin-reach';
import { seatbeltProfile } from '@aalis/sandbox-darwin';
import { dockerRunArgs, planMounts, resolveProfile } from '@aalis/sandbox-docker';
import { scanHost, translatePolicy } from '@aalis/sandbox-linux';
import { parse } from './args.js';
import { BACKEND_CHOICES, type BackendChoice, boundaryOf, resolveBackend, TIER_CHOICES, tierOf } from './choices.js';
import { chooseDataDir } from './data-dir.js';
import { type CliIo, UsageError } from './io.js';
import { startLocal } from './runtime.js';
import { describeSecretEnv, secretEnvView } from './secret-env-view.js';

export const POLICY_HELP = `aalis policy: the sandbox policy of a tier, and its translation for a backend

Usage: aalis policy [--tier TIER] [--boundary ask|deny] [--backend ${BACKEND_CHOICES.join('|')}] [--cwd DIR] [--allow-write PATH]... [--json]

Prints the SandboxPolicy an owner's command gets in a conversation whose main directory is the
current directory (or --cwd), in its layers (later layers win), then what the backend makes of
it: the bubblewrap arguments on linux, the Seatbelt profile on darwin, the docker run
arguments (as the unprivileged uid restricted tiers run as) for docker. Only the sandboxed tiers
(readonly, workspace) have a policy; confirm and full run on the host.

Last comes the environment filter: the variables a sandboxed command does not get (names that
look like credentials, each with its reason), and the allow and deny lists of the daemon config
(reach.env in aalis.config.json of the current directory, or --config FILE).

Options:
  --tier TIER          ${TIER_CHOICES.join(' | ')}  (default workspace)
  --config FILE        the daemon config whose reach.env lists to show
  --json               the policy and translation as JSON
  -h, --help           this help
`;

function layers(policy: SandboxPolicy): string {
  const rules = (list: SandboxPolicy['readDeny']) =>
    list.map((r) => `    ${'path' in r ? r.path : `/${r.pattern}/`}${r.except?.length ? `  except ${r.except.map((e) => ('path' in e ? e.path : `/${e.pattern}/`)).join(', ')}` : ''}`).join('\n') || '    (none)';
  const paths = (list: readonly string[]) => list.map((p) => `    ${p}`).join('\n') || '    (none)';
  return [
    'reads: everything, then',
    `  readDeny:\n${rules(policy.readDeny)}`,
    `  readAllowWithin:\n${paths(policy.readAllowWithin)}`,
    'writes: nothing, then',
    `  write:\n${paths(policy.write)}`,
    `  writeDeny:\n${rules(policy.writeDeny)}`,
    `  writeExceptions:\n${rules(policy.writeExceptions)}`,
    `  controlDeny:\n${rules(policy.controlDeny)}`,
    `network: ${policy.network}${policy.localPorts.length ? ` (loopback ports refused: ${policy.localPorts.join(', ')})` : ''}`,
    `unix sockets only under:\n${paths(policy.unixSockets)}`,
  ].join('\n');
}

async function translate(backend: 'linux' | 'darwin' | 'docker', policy: SandboxPolicy, cwd: string): Promise<string> {
  switch (backend) {
    case 'linux': {
      const dir = mkdtempSync(join(tmpdir(), 'aalis-policy-'));
      try {
        const emptyFile = join(dir, 'empty');
        writeFileSync(emptyFile, '');
        const { args } = translatePolicy(policy, scanHost(policy, cwd), { cwd, emptyFile });
        return `bwrap ${args.map(quote).join(' ')} -- CMD...`;
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
    case 'darwin':
      return seatbeltProfile(policy);
    case 'docker': {
      const resolved = resolveProfile({ profile: policy.network === 'on' ? 'network' : 'stdio' });
      if (resolved.kind !== 'container') throw new Error('the docker profile did not resolve to a container');
      const plan = await planMounts({ policy, cwd });
      const args = dockerRunArgs({
        name: 'aalis-policy-preview',
        image: process.env.AALIS_DOCKER_IMAGE || '<image>',
        profile: resolved.profile,
        plan,
        identity: { kind: 'restricted' },
        network: policy.network === 'on' && resolved.profile.network !== 'none' ? 'bridge' : 'none',
        cwd: plan.cwd,
        envNames: [],
        labels: {},
        interactive: false,
        argv: ['CMD...'],
        deadlineSeconds: 605, // the default --timeout of 600 s, plus the grace the sandbox adds
      });
      return `docker ${args.map(quote).join(' ')}`;
    }
  }
}

function quote(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", "'\\''")}'`;
}

/** `aalis policy`. */
export async function policyCommand(argv: readonly string[], io: CliIo): Promise<number> {
  const { flags } = parse('policy', argv, {
    tier: { type: 'string', choices: TIER_CHOICES },
    boundary: { type: 'string', choices: ['ask', 'deny'] },
    backend: { type: 'string', choices: BACKEND_CHOICES },
    cwd: { type: 'string' },
    'allow-write': { type: 'string', multiple: true },
    data: { type: 'string' },
    config: { type: 'string' },
    json: { type: 'boolean' },
  });
  if (flags.help) {
    io.stdout(POLICY_HELP);
    return 0;
  }
  const tier = tierOf(flags.tier, 'policy');
  if (tier === 'confirm' || tier === 'full') throw new UsageError(`the ${tier} tier runs commands on the host, so it has no sandbox policy; use readonly or workspace.`, 'policy');
  const backend = resolveBackend((flags.backend as BackendChoice | undefined) ?? 'auto');
  const cwd = realpathSync(resolve(typeof flags.cwd === 'string' ? flags.cwd : process.cwd()));
  const allowWrite = ((flags['allow-write'] as string[] | undefined) ?? []).map((p) => realpathSync(resolve(p)));
  const environment = secretEnvView(process.cwd(), flags.config as string | undefined);
  const runtime = await startLocal({ tier, boundary: boundaryOf(flags.boundary), cwd, allowWrite, backend: 'none', data: chooseDataDir({ data: flags.data as string | undefined }), io });
  try {
    const policy = sandboxPolicyOf(await runtime.kernel.get(reachInspector).reachOf(runtime.turn));
    const translation = await translate(backend, policy, cwd);
    if (flags.json) {
      io.stdout(`${JSON.stringify({ tier, backend, policy, translation, environment }, null, 2)}\n`);
    } else {
      io.stdout(`Sandbox policy (tier ${tier}):\n${layers(policy)}\n\nTranslation for ${backend}:\n${translation}\n\n${describeSecretEnv(environment)}\n`);
    }
    return 0;
  } finally {
    await runtime.stop();
  }
}
