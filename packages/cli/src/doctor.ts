import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { SandboxProbe } from '@aalis/api-reach';
import { DockerSandbox } from '@aalis/sandbox-docker';
import { parse } from './args.js';
import { sandboxOf } from './backends.js';
import { BACKEND_CHOICES, type BackendChoice, resolveBackend } from './choices.js';
import type { CliIo } from './io.js';
import { loadConfig } from './daemon/config.js';
import { specToolImagesOf } from './daemon/kernel.js';
import { describeSecretEnv, type SecretEnvView, secretEnvView } from './secret-env-view.js';
import { describeHostLandings, hostLandingsView } from './host-landings.js';
import { describeRunFoldersFs, runFoldersFs } from './run-folders-fs.js';

export const DOCTOR_HELP = `aalis doctor: what works on this machine

Usage: aalis doctor [--backend ${BACKEND_CHOICES.join('|')}] [--config FILE] [--json]

Checks every sandbox backend (bubblewrap, user namespaces and the AppArmor restriction, seccomp;
the Docker engine and image; sandbox-exec) and prints each check with the command that fixes it.
Exits 0 only when the configured backend (--backend, default the platform's) works and the
config (when there is one) can be read: the daemon does not start with a config it cannot read.
Then whether spec tools in container profiles can run (the engine and the tools.images of the
config); when not, the daemon refuses them, and whether this user's exec helper runs (the process
that runs aalis exec's next commands with the sandbox set up; AALIS_EXEC_HELPER=off: none). Last it lists the environment filter of sandboxed commands: the variables removed (names that
look like credentials) and the allow and deny lists of the daemon config (reach.env in
aalis.config.json of the current directory, or --config FILE).
`;

async function probeOf(backend: 'linux' | 'darwin' | 'docker'): Promise<SandboxProbe> {
  try {
    return await (await sandboxOf(backend)).probe();
  } catch (error) {
    const e = error as { reason?: string; fix?: string; message: string };
    return { backend, available: false, checks: [{ name: 'backend', ok: false, detail: e.reason ?? e.message, ...(e.fix ? { fix: e.fix } : {}) }] };
  }
}

/** Whether spec tools' container profiles can run with this config: the daemon refuses them (fail closed) when not. */
async function specToolsCheck(configFile: string | undefined): Promise<{ works: boolean; detail: string }> {
  let config: ReturnType<typeof loadConfig>['config'];
  try {
    config = loadConfig(process.cwd(), configFile).config;
  } catch (error) {
    return { works: false, detail: `the config could not be read (${error instanceof Error ? error.message : String(error)})` };
  }
  if (config.tools.engine === 'off') return { works: false, detail: 'tools.engine is "off": tools in profiles stdio, network and builder are refused; profile local runs through the host sandbox' };
  const images = specToolImagesOf(config, process.env);
  const probe = await new DockerSandbox({ images, instance: 'doctor' }).probe();
  if (probe.available) return { works: true, detail: `container profiles run on the engine (images ${images.stdio}, builder ${images.builder})` };
  const failed = probe.checks.filter((c) => !c.ok).map((c) => `${c.name}: ${c.detail}${c.fix ? ` (fix: ${c.fix})` : ''}`);
  return { works: false, detail: `tools in profiles stdio, network and builder are refused and do not run (fail closed): ${failed.join('; ')}` };
}

/** The exec helper of this install for this user (packages/cli README, "The exec helper"): where it is, and whether it runs. */
export function execHelperState(bundle = fileURLToPath(new URL('../dist/aalis-exec.cjs', import.meta.url)), env: NodeJS.ProcessEnv = process.env): { readonly socket: string | null; readonly pid: number | null; readonly detail: string } {
  const client = createRequire(import.meta.url)('../bin/exec-client.cjs') as { helperSocket(bundle: string, env: NodeJS.ProcessEnv): string | undefined };
  const socket = client.helperSocket(bundle, env);
  if (socket === undefined) {
    const why = env.AALIS_EXEC_HELPER === 'off' ? 'off (AALIS_EXEC_HELPER=off)' : 'none for this user here (no runtime directory of its own under /run, or no exec bundle)';
    return { socket: null, pid: null, detail: `${why}: every aalis exec runs in its own process` };
  }
  let pid: number | null = null;
  try {
    const read = Number(readFileSync(socket.replace(/\.sock$/, '.pid'), 'latin1'));
    if (Number.isSafeInteger(read) && read > 1 && readFileSync(`/proc/${read}/cmdline`, 'latin1').includes(socket)) pid = read;
  } catch {
    // not running
  }
  return { socket, pid, detail: pid === null ? `not running: the next aalis exec runs in its own process and starts one at ${socket}` : `running (pid ${pid}) at ${socket}; it ends after 5 minutes unused (AALIS_EXEC_HELPER=off: none)` };
}

/** `aalis doctor`. */
export async function doctorCommand(argv: readonly string[], io: CliIo): Promise<number> {
  const { flags } = parse('doctor', argv, { backend: { type: 'string', choices: BACKEND_CHOICES }, config: { type: 'string' }, json: { type: 'boolean' } });
  if (flags.help) {
    io.stdout(DOCTOR_HELP);
    return 0;
  }
  const configured = resolveBackend((flags.backend as BackendChoice | undefined) ?? 'auto');
  io.stderr('aalis doctor: probing the sandbox backends…\n');
  const probes = await Promise.all((['linux', 'darwin', 'docker'] as const).map(probeOf));
  const ok = probes.find((p) => p.backend === configured)?.available === true;
  // A config that cannot be read is reported, not thrown: the rest of the report still helps.
  let environment: SecretEnvView | { error: string };
  try {
    environment = secretEnvView(process.cwd(), flags.config as string | undefined);
  } catch (error) {
    environment = { error: error instanceof Error ? error.message : String(error) };
  }
  const specTools = await specToolsCheck(flags.config as string | undefined);
  const configReadable = !('error' in environment);
  const status = ok && configReadable ? 0 : 1;
  const execHelper = execHelperState();
  const hostLandings = hostLandingsView(process.cwd(), process.env);
  const runFolders = runFoldersFs();
  if (flags.json) {
    io.stdout(`${JSON.stringify({ configured, ok, configReadable, probes, environment, specTools, execHelper, hostLandings, runFolders: runFolders ?? null }, null, 2)}\n`);
    return status;
  }
  for (const probe of probes) {
    const mark = probe.available ? 'works' : 'not available';
    io.stdout(`${probe.backend}${probe.backend === configured ? ' (configured)' : ''}: ${mark}\n`);
    for (const check of probe.checks) {
      io.stdout(`  ${check.ok ? 'ok  ' : 'FAIL'} ${check.name}: ${check.detail}\n`);
      if (!check.ok && check.fix) io.stdout(`       fix: ${check.fix}\n`);
    }
  }
  io.stdout(`\nspec tools (002): ${specTools.works ? 'ok  ' : 'FAIL'} ${specTools.detail}\n`);
  io.stdout(`\nexec helper: ${execHelper.detail}\n`);
  io.stdout(`\n${describeRunFoldersFs(runFolders)}`);
  io.stdout(`\n${describeHostLandings(hostLandings)}`);
  io.stdout(`\n${'error' in environment ? `environment of sandboxed commands: FAIL the config could not be read (${environment.error}); the daemon will not start with it` : describeSecretEnv(environment)}\n`);
  io.stdout(ok ? `\nThe configured backend (${configured}) works.\n` : `\nThe configured backend (${configured}) does not work here: commands in the sandboxed tiers will not run.\n`);
  if (!configReadable) io.stdout(`The config cannot be read (above): 'aalis serve' refuses to start with it; fix the field it names.\n`);
  return status;
}
