import { realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import { NEVER_WRITTEN, PLAN_RUN_DIR, type SandboxPlan, type SandboxPolicy, sandboxPolicyOf } from '@aalis/api-reach';
import { reachView } from '@aalis/plugin-reach';
import { parse } from './args.js';
import { sandboxOf } from './backends.js';
import { BACKEND_CHOICES, type BackendChoice, boundaryOf, resolveBackend, TIER_CHOICES, tierOf } from './choices.js';
import { chooseDataDir } from './data-dir.js';
import { type CliIo, UsageError } from './io.js';
import { startLocal } from './runtime.js';
import { describeSecretEnv, secretEnvView } from './secret-env-view.js';

export const POLICY_HELP = `aalis policy: the sandbox policy of a tier, and its translation for a backend

Usage: aalis policy [--tier TIER] [--boundary ask|deny] [--backend ${BACKEND_CHOICES.join('|')}] [--cwd DIR] [--allow-write PATH]... [--json]

Prints the SandboxPolicy an owner's command gets in a conversation whose main directory is the
current directory (or --cwd), in its layers (later layers win), then the backend's plan for a
command there, built by the code its run uses: the whole bubblewrap command line on linux
(namespaces, capability drop, seccomp fd, mounts), the sandbox-exec command line and Seatbelt
profile on darwin, the docker run arguments (with the identity the run would have) for docker,
and the steps before and after. Only the sandboxed tiers (readonly, workspace) have a policy;
confirm and full run on the host.

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

/** The command `aalis policy` plans: a stand-in argv, run in the main directory with the exec default timeout. */
const PLANNED_ARGV = ['CMD...'] as const;

/**
 * The real plan of the backend: built by the backend's own `plan`, the code its `run` uses. The
 * command's environment (the credential's, filtered as printed below) joins at run time, so the
 * plan is made with none; the run's own directory or container name reads PLAN_RUN_DIR.
 */
async function planOf(backend: 'linux' | 'darwin' | 'docker', policy: SandboxPolicy, cwd: string): Promise<SandboxPlan> {
  const service = await sandboxOf(backend);
  return service.plan({ argv: [...PLANNED_ARGV], cwd, env: {}, timeoutMs: 600_000, policy });
}

function describePlan(plan: SandboxPlan): string {
  const steps = (list: SandboxPlan['pre']) => list.map((s) => `    ${s.step}: ${s.detail}`).join('\n') || '    (none)';
  const files = plan.files.map((f) => `    ${f.name} at ${f.at}: ${f.bytes} bytes, sha256 ${f.sha256}${f.text === undefined ? '' : `\n${f.text.replace(/^/gm, '      ')}`}`).join('\n') || '    (none)';
  const env = Object.keys(plan.env);
  return [
    `  ${plan.argv.map(quote).join(' ')}`,
    `  env: ${env.length > 0 ? env.join(', ') : '(none)'}, then the command's own environment (filtered as below)`,
    `  files:\n${files}`,
    `  before the command:\n${steps(plan.pre)}`,
    `  after the command:\n${steps(plan.post)}`,
    `  (${PLAN_RUN_DIR} is the run's own directory or container name, made when it starts)`,
  ].join('\n');
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
    // as the call's credential hands it to the sandbox (plugin-reach credential.ts): the
    // never-written files join the control-deny layer; without them this printed less than runs
    const base = sandboxPolicyOf(await runtime.kernel.get(reachView).reachOf(runtime.turn));
    const policy: SandboxPolicy = { ...base, controlDeny: [...base.controlDeny, ...NEVER_WRITTEN] };
    const plan = await planOf(backend, policy, cwd);
    if (flags.json) {
      io.stdout(`${JSON.stringify({ tier, backend, policy, plan, environment }, null, 2)}\n`);
    } else {
      io.stdout(`Sandbox policy (tier ${tier}):\n${layers(policy)}\n\nWhat the ${backend} backend runs:\n${describePlan(plan)}\n\n${describeSecretEnv(environment)}\n`);
    }
    return 0;
  } finally {
    await runtime.stop();
  }
}
