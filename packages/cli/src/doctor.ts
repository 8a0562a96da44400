import type { SandboxProbe } from '@aalis/api-reach';
import { parse } from './args.js';
import { sandboxOf } from './backends.js';
import { BACKEND_CHOICES, type BackendChoice, resolveBackend } from './choices.js';
import type { CliIo } from './io.js';
import { describeSecretEnv, type SecretEnvView, secretEnvView } from './secret-env-view.js';

export const DOCTOR_HELP = `aalis doctor: what works on this machine

Usage: aalis doctor [--backend ${BACKEND_CHOICES.join('|')}] [--json]

Checks every sandbox backend (bubblewrap, user namespaces and the AppArmor restriction, seccomp;
the Docker engine and image; sandbox-exec) and prints each check with the command that fixes it.
Exits 0 only when the configured backend (--backend, default the platform's) works.
Last it lists the environment filter of sandboxed commands: the variables removed (names that
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
  if (flags.json) {
    io.stdout(`${JSON.stringify({ configured, ok, probes, environment }, null, 2)}\n`);
    return ok ? 0 : 1;
  }
  for (const probe of probes) {
    const mark = probe.available ? 'works' : 'not available';
    io.stdout(`${probe.backend}${probe.backend === configured ? ' (configured)' : ''}: ${mark}\n`);
    for (const check of probe.checks) {
      io.stdout(`  ${check.ok ? 'ok  ' : 'FAIL'} ${check.name}: ${check.detail}\n`);
      if (!check.ok && check.fix) io.stdout(`       fix: ${check.fix}\n`);
    }
  }
  io.stdout(`\n${'error' in environment ? `environment of sandboxed commands: FAIL the config could not be read (${environment.error}); the daemon will not start with it` : describeSecretEnv(environment)}\n`);
  io.stdout(ok ? `\nThe configured backend (${configured}) works.\n` : `\nThe configured backend (${configured}) does not work here: commands in the sandboxed tiers will not run.\n`);
  return ok ? 0 : 1;
}
