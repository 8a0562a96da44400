import { join } from 'node:path';
import { type SandboxProbe, type SandboxService, SandboxUnavailableError } from '@aalis/api-reach';
import { authorityPlugin, createKernel, type Identity, type Kernel, type Plugin, sessionsPlugin, toolsPlugin } from '@aalis/core';
import { modelPlugin } from '@aalis/model';
import { agentPlugin, reviewerPlugin } from '@aalis/plugin-agent';
import { approvalPlugin } from '@aalis/plugin-approval';
import { reachPlugin } from '@aalis/plugin-reach';
import { builtinToolsPlugin } from '@aalis/plugin-tools';
import { DockerDeployment, instanceNameOf } from '@aalis/sandbox-docker';
import { sandboxOf, sandboxPlugin } from '../backends.js';
import { resolveBackend } from '../choices.js';
import { installOf } from '../install.js';
import type { DaemonConfig } from './config.js';
import type { ChosenDeployment } from './deployment.js';
import { type PodModule, loadPod } from './pod.js';

/** What the daemon's kernel is built from. */
export interface KernelPlan {
  readonly dataDir: string;
  /** The deployment directory, when there is one: its `data/` and `data-*` are unreadable. */
  readonly deploymentDir: string | undefined;
  /** Every other data directory the daemon knows of (the default, running daemons'): unreadable, unwritable. */
  readonly otherData: readonly string[];
  /** Ports the sandbox must not reach: the daemon's own and every other running daemon's. */
  readonly localPorts: readonly number[];
  readonly configFile: string | undefined;
  readonly config: DaemonConfig;
  readonly deployment: ChosenDeployment;
  /** The daemon's own port: the sandbox must not reach it. */
  readonly port: number;
  /** Whom the console answers as; made an owner. */
  readonly consoleIdentity: Identity;
  readonly env: NodeJS.ProcessEnv;
  readonly progress: (line: string) => void;
}

/** A started kernel and what the daemon needs to know about it. */
export interface DaemonKernel {
  readonly kernel: Kernel;
  readonly backend: SandboxService['backend'];
  readonly probe: SandboxProbe;
  /** Set in the docker deployment: every user's containers. */
  readonly docker: DockerDeployment | undefined;
  readonly pod: PodModule | undefined;
  stop(): Promise<void>;
}

/** The pod's config: the config file's `pod` section plus the daemon's own port and every other running daemon's (kept off the sandbox). */
function podConfigOf(plan: KernelPlan): Record<string, unknown> {
  const own = plan.config.pod ?? {};
  const ports = Array.isArray(own.localPorts) ? own.localPorts : [];
  return { ...own, localPorts: [...new Set([...ports, plan.port, ...plan.localPorts])] };
}

/** The model's config, its key read from the daemon's environment (`apiKeyEnv`) rather than the process's. */
function modelConfigOf(plan: KernelPlan): Record<string, unknown> {
  const own = plan.config.model;
  if (own === undefined) return {};
  const key = own.apiKey ?? (own.apiKeyEnv !== undefined ? plan.env[own.apiKeyEnv] : undefined);
  return { ...own, ...(key !== undefined && key !== '' ? { apiKey: key } : {}) };
}

/** The owners of the config plus the console's identity. */
export function ownersOf(config: DaemonConfig, consoleIdentity: Identity): Record<string, string[]> {
  const owners: Record<string, string[]> = Object.fromEntries(Object.entries(config.owners).map(([platform, ids]) => [platform, [...ids]]));
  const list = owners[consoleIdentity.platform] ?? [];
  if (!list.includes(consoleIdentity.userId)) list.push(consoleIdentity.userId);
  owners[consoleIdentity.platform] = list;
  return owners;
}

async function dockerSandbox(plan: KernelPlan, installDir: string): Promise<{ service: SandboxService; deployment: DockerDeployment }> {
  const image = plan.env.AALIS_DOCKER_IMAGE ?? plan.config.docker.image;
  if (!image) {
    throw new SandboxUnavailableError('docker', 'the docker deployment has no image', 'build one (bash packages/sandbox-docker/scripts/prepare.sh prints its tag) and set AALIS_DOCKER_IMAGE=<tag> or "docker": { "image": "<tag>" } in the config');
  }
  const images = { stdio: image, network: plan.env.AALIS_DOCKER_NETWORK_IMAGE ?? plan.config.docker.networkImage ?? image };
  // Unique per data directory: two daemons never share an instance, whatever their configs say.
  const common = { images, instance: instanceNameOf(plan.dataDir, plan.config.docker.instance), neverMount: [installDir] };
  plan.progress('starting the docker deployment (engine, image, leftover containers)…');
  // Inside the data directory's workspace: the rest of the data directory is the daemon's private
  // data, which reach never lets a command read.
  const deployment = await DockerDeployment.start({ ...common, defaultSpec: { profile: 'network' }, dataRoot: join(plan.dataDir, 'workspace') });
  // Every command runs as the user whose space holds its directory, confined to that space.
  return { service: deployment.sandbox, deployment };
}

/**
 * Builds and starts the daemon's kernel: sessions, authority (owners from the config and the
 * console's identity), approval, reach (the daemon's port kept from the sandbox), the tools, the
 * sandbox backend of the deployment, and the pod when `@aalis/plugin-pod` provides one. A plugin
 * that fails to start stops the daemon: it does not serve with part of its safety missing.
 */
export async function startKernel(plan: KernelPlan): Promise<DaemonKernel> {
  const install = installOf();
  let service: SandboxService;
  let docker: DockerDeployment | undefined;
  if (plan.deployment.mode === 'docker') {
    ({ service, deployment: docker } = await dockerSandbox(plan, install.dir));
  } else {
    service = await sandboxOf(resolveBackend(plan.config.sandbox.backend));
  }
  plan.progress(`probing the ${service.backend} sandbox…`);
  const probe = await service.probe();
  if (!probe.available) {
    const failed = probe.checks.filter((c) => !c.ok);
    plan.progress(
      `WARNING: the ${service.backend} sandbox does not work here, so commands in the readonly and workspace tiers will not run:\n${failed
        .map((c) => `    - ${c.name}: ${c.detail}${c.fix ? `\n      fix: ${c.fix}` : ''}`)
        .join('\n')}`,
    );
  }

  const kernel = createKernel({ dataDir: plan.dataDir })
    .use(sessionsPlugin, { persist: true })
    .use(authorityPlugin, { owners: ownersOf(plan.config, plan.consoleIdentity) })
    .use(approvalPlugin, plan.config.approval)
    .use(reachPlugin, {
      install: install.dir,
      form: install.form,
      ...(plan.deploymentDir !== undefined ? { deployment: plan.deploymentDir } : {}),
      ...(plan.configFile !== undefined ? { configFile: plan.configFile } : {}),
      otherData: [...plan.otherData],
      localPorts: [...plan.localPorts],
      ...(plan.config.reach ? { env: plan.config.reach.env } : {}),
    })
    .use(toolsPlugin)
    .use(builtinToolsPlugin)
    .use(sandboxPlugin(service))
    // The agent answers messages; without a model configured it answers each with a clear error.
    .use(modelPlugin, modelConfigOf(plan))
    .use(agentPlugin, plan.config.agent ?? {})
    // approver: reviewer asks the same model; without one every such ask is refused, saying why.
    .use(reviewerPlugin);
  const pod = await loadPod();
  if (pod) {
    plan.progress('the Isolation Pod (@aalis/plugin-pod) is installed: starting it too');
    kernel.use(pod.plugin as Plugin, podConfigOf(plan));
  } else if (plan.config.pod !== undefined) {
    plan.progress('WARNING: the config has "pod" settings but @aalis/plugin-pod provides no podPlugin in this version; they are ignored');
  }

  plan.progress('starting plugins…');
  const status = await kernel.start();
  // The pod is a side room: the daemon serves without it. Everything else is the safety of every call.
  const failed = status.filter((s) => s.state === 'failed');
  const fatal = failed.filter((s) => s.name !== 'pod');
  if (fatal.length > 0) {
    await kernel.stop();
    await docker?.stop().catch(() => 0);
    throw new Error(`plugins failed to start, so the daemon does not run:\n${fatal.map((s) => `  - ${s.name}: ${'cause' in s ? s.cause : 'failed'}`).join('\n')}`);
  }
  for (const s of failed) plan.progress(`WARNING: the ${s.name} plugin did not start, the daemon runs without it: ${'cause' in s ? s.cause : 'failed'}`);
  return {
    kernel,
    backend: service.backend,
    probe,
    docker,
    pod,
    async stop() {
      await kernel.stop();
      // A container still running (a command that ignored its abort) goes with the deployment.
      await docker?.stop().catch(() => 0);
    },
  };
}
