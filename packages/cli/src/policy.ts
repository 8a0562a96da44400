import { PLAN_RUN_DIR, reach, type SandboxPlan, type SandboxPolicy, sandbox } from '@aalis/api-reach';
import { sandboxRequestOf } from '@aalis/plugin-tools';
import { parse } from './args.js';
import { BACKEND_CHOICES, type BackendChoice, boundaryOf, resolveBackend, TIER_CHOICES, tierOf } from './choices.js';
import { chooseDataDir } from './data-dir.js';
import { directory } from './directory-option.js';
import { type CliIo, UsageError } from './io.js';
import { startLocal } from './runtime.js';
import { describeSecretEnv, secretEnvView } from './secret-env-view.js';

export const POLICY_HELP = `aalis policy: the sandbox policy of a tier, and its translation for a backend

Usage: aalis policy [--tier TIER] [--boundary ask|deny] [--backend ${BACKEND_CHOICES.join('|')}] [--cwd DIR] [--allow-write PATH]... [--data DIR] [--config FILE] [--json]

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
  --boundary ask|deny  what a request outside the reach gets: asked (default), or refused
  --backend NAME       ${BACKEND_CHOICES.join(' | ')}  whose plan to print (default auto: this machine's)
  --cwd DIR            the conversation's main directory (default the current directory)
  --allow-write PATH   a further writable root, as a grant would add (repeatable)
  --data DIR           the data directory (default: the shared rule, see 'aalis exec --help')
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
const PLANNED_TIMEOUT_MS = 600_000;

function describePlan(plan: SandboxPlan): string {
  const steps = (list: SandboxPlan['pre']) => list.map((s) => `    ${s.step}: ${s.detail}`).join('\n') || '    (none)';
  const files = plan.files.map((f) => `    ${f.name} at ${f.at}: ${f.bytes} bytes, sha256 ${f.sha256}${f.text === undefined ? '' : `\n${f.text.replace(/^/gm, '      ')}`}`).join('\n') || '    (none)';
  const env = Object.keys(plan.env);
  return [
    `  ${plan.argv.map(quote).join(' ')}`,
    `  env (the whole environment the command gets, after the filter below): ${env.length > 0 ? env.join(', ') : '(none)'}`,
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
  const { flags, positionals, rest } = parse('policy', argv, {
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
  if (positionals.length > 0 || rest.length > 0) throw new UsageError(`policy takes no arguments (got '${[...positionals, ...rest].join(' ')}'); the directory goes in --cwd.`, 'policy');
  const tier = tierOf(flags.tier, 'policy');
  if (tier === 'confirm' || tier === 'full') throw new UsageError(`the ${tier} tier runs commands on the host, so it has no sandbox policy; use readonly or workspace.`, 'policy');
  const backend = resolveBackend((flags.backend as BackendChoice | undefined) ?? 'auto');
  const cwd = typeof flags.cwd === 'string' ? directory(flags.cwd, '--cwd', true, 'policy') : directory(process.cwd(), 'the current directory', false, 'policy');
  const allowWrite = ((flags['allow-write'] as string[] | undefined) ?? []).map((p) => directory(p, '--allow-write', true, 'policy'));
  const environment = secretEnvView(process.cwd(), flags.config as string | undefined);
  // Started as `aalis exec` starts it, with the backend it would run under.
  const runtime = await startLocal({ tier, boundary: boundaryOf(flags.boundary), cwd, allowWrite, backend, data: chooseDataDir({ data: flags.data as string | undefined }), io });
  try {
    // The request `run_command` would send first, built by the same function from the owner's
    // credential for this call, then planned by the backend's own `plan`, the code its run uses.
    const service = runtime.kernel.get(sandbox);
    const credential = await runtime.kernel.get(reach).forCall(runtime.turn);
    const request = await sandboxRequestOf(credential, service, { argv: [...PLANNED_ARGV], cwd, timeoutMs: PLANNED_TIMEOUT_MS });
    const policy: SandboxPolicy = request.policy;
    const plan: SandboxPlan = await service.plan(request);
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
