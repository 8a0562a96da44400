import type { SandboxCheck, SandboxProbe } from '@aalis/api-reach';
import { type DockerCli, engineUnusable } from './docker-cli.js';
import { PREPARE_SCRIPT_HINT } from './prepare-script.js';

/**
 * What `aalis doctor` shows for the docker backend: the engine at DOCKER_HOST, each image, and a
 * container started with the baseline flags showing no capabilities and no_new_privs from
 * inside. Never throws.
 */
export async function probeEngine(cli: DockerCli, images: { readonly stdio: string; readonly network?: string; readonly builder?: string }): Promise<SandboxProbe> {
  const checks: SandboxCheck[] = [];
  const version = await cli.call(['version', '--format', '{{.Server.Version}} (API {{.Server.APIVersion}})']);
  const engineOk = version.code === 0;
  const unusable = engineOk ? undefined : engineUnusable(version.stderr, cli.engine);
  checks.push({
    name: 'engine',
    ok: engineOk,
    detail: engineOk ? `Docker Engine ${version.stdout.trim()} at ${cli.engine}` : `${unusable?.kind === 'denied' ? `the engine at ${cli.engine} refuses this user` : `no engine answers at ${cli.engine}`}: ${version.stderr.trim().split('\n')[0] ?? ''}`,
    ...(engineOk ? {} : { fix: unusable?.kind === 'denied' ? unusable.fix : `start the engine (dockerd, or ${PREPARE_SCRIPT_HINT}), or set DOCKER_HOST to one that runs` }),
  });
  for (const image of new Set(Object.values(images))) {
    if (!engineOk) {
      checks.push({ name: `image ${image}`, ok: false, detail: 'not checked: no engine', fix: 'start the engine first' });
      continue;
    }
    const inspect = await cli.call(['image', 'inspect', '--format', '{{.Id}}', image]);
    checks.push({
      name: `image ${image}`,
      ok: inspect.code === 0,
      detail: inspect.code === 0 ? `present (${inspect.stdout.trim().slice(0, 19)})` : 'missing on the engine',
      ...(inspect.code === 0 ? {} : { fix: `build or load ${image} on the engine (the test image and the builder: ${PREPARE_SCRIPT_HINT})` }),
    });
  }
  if (checks.every((c) => c.ok)) {
    const inside = await cli.call([
      ...['run', '--rm', '--pull', 'never', '--cap-drop', 'ALL', '--security-opt', 'no-new-privileges', '--read-only', '--network', 'none'],
      // Through the same entry as every container (init, then its own deadline): an image without
      // timeout fails here, not at the first command.
      ...['--user', '10001:10001', '--log-driver', 'none', '--init', '--entrypoint', 'timeout', images.stdio, '-s', 'KILL', '30', 'cat', '/proc/self/status'],
    ]);
    const capEff = /^CapEff:\s*([0-9a-f]+)$/m.exec(inside.stdout)?.[1];
    const noNewPrivs = /^NoNewPrivs:\s*(\d)$/m.exec(inside.stdout)?.[1];
    const ok = inside.code === 0 && capEff !== undefined && /^0+$/.test(capEff) && noNewPrivs === '1';
    checks.push({
      name: 'baseline',
      ok,
      detail: ok ? 'a container has no effective capabilities and no_new_privs set' : `a test container did not show the baseline: ${inside.stderr.trim() || inside.stdout.trim()}`,
      ...(ok ? {} : { fix: 'use an engine that honours --cap-drop and no-new-privileges and has its init (docker-init), with an image that has cat and timeout (busybox or coreutils)' }),
    });
  }
  return { backend: 'docker', available: checks.every((c) => c.ok), checks };
}
