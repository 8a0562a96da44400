import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { type SandboxProbe, type SandboxService, SandboxUnavailableError, sandboxPlugin } from '@aalis/api-reach';
import { authorityPlugin, createKernel, type Identity, type Kernel, KernelError, type Plugin, sessionsPlugin, toolsPlugin } from '@aalis/core';
import { modelPlugin } from '@aalis/model';
import { agentPlugin, reviewerPlugin } from '@aalis/plugin-agent';
import { approvalPlugin } from '@aalis/plugin-approval';
import { reachPlugin } from '@aalis/plugin-reach';
import { specToolsPlugin } from '@aalis/plugin-spec-tools';
import { builtinToolsPlugin } from '@aalis/plugin-tools';
import { DockerDeployment, instanceNameOf } from '@aalis/sandbox-docker';
import { sandboxOf } from '../backends.js';
import { resolveBackend } from '../choices.js';
import { timedSandbox } from './call-timing.js';
import { installOf } from '../install.js';
import type { DaemonConfig } from './config.js';
import type { ChosenDeployment } from './deployment.js';
import { type ExtensionReport, type LoadedExtension, loadExtensions, pluginDirOf } from './plugins.js';
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
  /** The config's plugins: loaded and running, or failed with the cause. */
  readonly extensions: readonly ExtensionReport[];
  stop(): Promise<void>;
}

/** The pod's config: the config file's `pod` section plus the daemon's own port and every other running daemon's (kept off the sandbox). */
function podConfigOf(plan: KernelPlan): Record<string, unknown> {
  const own = plan.config.pod ?? {};
  const ports = Array.isArray(own.localPorts) ? own.localPorts : [];
  return { ...own, localPorts: [...new Set([...ports, plan.port, ...plan.localPorts])] };
}

/**
 * Code the daemon runs besides its packages, kept from every sandboxed write (control plane): a
 * generated project's `plugins/` and the directory of each plugin loaded by path.
 */
function codeDirsOf(install: { dir: string; form: 'source' | 'npm' }, extra: readonly LoadedExtension[], baseDir: string): string[] {
  // a path-named plugin's whole directory, not only its entry's (whose package.json chose the entry)
  const dirs = extra.filter((e) => !e.from.includes('/node_modules/')).map((e) => pluginDirOf(e.specifier, baseDir) ?? dirname(e.from));
  if (install.form === 'npm' && existsSync(join(install.dir, 'plugins'))) dirs.push(join(install.dir, 'plugins'));
  return [...new Set(dirs)];
}

/** The spec-tools plugin's config: the tools directory of the deployment, and the engine's images unless `tools.engine` is off. */
export function specToolsConfigOf(plan: Pick<KernelPlan, 'config' | 'deploymentDir' | 'dataDir' | 'env'>): { dir: string } & Record<string, unknown> {
  const tools = plan.config.tools;
  const dir = resolve(plan.deploymentDir ?? plan.dataDir, tools.dir);
  if (tools.engine === 'off') return { dir, envAllow: tools.envAllow };
  return { dir, envAllow: tools.envAllow, docker: { images: specToolImagesOf(plan.config, plan.env), instance: instanceNameOf(plan.dataDir, 'tools') } };
}

/** The images of the spec tools' container profiles: the config's, else the docker deployment's, else the ones scripts/prepare.sh builds. */
export function specToolImagesOf(config: DaemonConfig, env: NodeJS.ProcessEnv): { stdio: string; network: string; builder: string } {
  const stdio = config.tools.images.stdio ?? env.AALIS_DOCKER_IMAGE ?? config.docker.image ?? 'aalis/sandbox-test:latest';
  return { stdio, network: config.tools.images.network ?? stdio, builder: config.tools.images.builder ?? 'aalis/sandbox-builder:latest' };
}

/** The model's config, its key read from the daemon's environment (`apiKeyEnv`) rather than the process's. */
function modelConfigOf(plan: KernelPlan): Record<string, unknown> {
  const own = plan.config.model;
  if (own === undefined) return {};
  const key = own.apiKey ?? (own.apiKeyEnv !== undefined ? plan.env[own.apiKeyEnv] : undefined);
  return { ...own, ...(key !== undefined && key !== '' ? { apiKey: key } : {}) };
}

/**
 * The docker deployment's persons rule: who may act for any person (answer their asks, revoke
 * their grants, change their conversations' settings). The console's identity (whoever holds the
 * daemon's token acts as it) and the config's `approval.persons.admins`.
 */
export function personsOf(config: DaemonConfig, consoleIdentity: Identity): { admins: Identity[] } {
  return { admins: [consoleIdentity, ...(config.approval?.persons?.admins ?? [])] };
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
    // a sandbox that outlived its kill (and what was killed to end it) is said in the daemon's log
    service = await sandboxOf(resolveBackend(plan.config.sandbox.backend), process.env, join(plan.dataDir, 'cache'), false, { onWarning: (line) => plan.progress(`WARNING: ${line}`) });
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

  const toolsConfig = specToolsConfigOf(plan);
  // The spec tools are code the daemon runs: their folder is control plane, never writable by a
  // command (a planted tool.json would be a tool nobody approved).
  mkdirSync(toolsConfig.dir, { recursive: true, mode: 0o755 });
  const pod = await loadPod();
  if (pod) {
    plan.progress('the Isolation Pod (@aalis/plugin-pod) is installed: starting it too');
  } else if (plan.config.pod !== undefined) {
    plan.progress('WARNING: the config has "pod" settings but @aalis/plugin-pod provides no podPlugin in this version; they are ignored');
  }
  const assemble = (extra: readonly LoadedExtension[]) => {
    const kernel = createKernel({ dataDir: plan.dataDir })
      .use(sessionsPlugin, { persist: true })
      // the docker deployment's owners are persons, each in a space of their own: one person's words never steer another's calls
      .use(authorityPlugin, { owners: ownersOf(plan.config, plan.consoleIdentity), persons: docker !== undefined })
      .use(approvalPlugin, docker === undefined ? plan.config.approval : { ...plan.config.approval, persons: personsOf(plan.config, plan.consoleIdentity) })
      .use(reachPlugin, {
        install: install.dir,
        form: install.form,
        ...(plan.deploymentDir !== undefined ? { deployment: plan.deploymentDir } : {}),
        ...(plan.configFile !== undefined ? { configFile: plan.configFile } : {}),
        // an inline model key makes the config a secret: no tool call reads it
        configHoldsSecrets: plan.config.model?.apiKey !== undefined,
        codeDirs: [...codeDirsOf(install, extra, baseDir), toolsConfig.dir],
        otherData: [...plan.otherData],
        // The host-side file tools run in the daemon's process, which sees every space: reach keeps each person to their own.
        ...(docker !== undefined ? { personSpaces: join(docker.dataRoot, 'users') } : {}),
        localPorts: [...plan.localPorts],
        ...(plan.config.reach ? { env: plan.config.reach.env } : {}),
      })
      .use(toolsPlugin)
      .use(builtinToolsPlugin)
      .use(specToolsPlugin, toolsConfig)
      // timed per call for the answer's Server-Timing header (call-timing.ts)
      .use(sandboxPlugin(timedSandbox(service)))
      // The agent answers messages; without a model configured it answers each with a clear error.
      .use(modelPlugin, modelConfigOf(plan))
      .use(agentPlugin, plan.config.agent ?? {})
      // approver: reviewer asks the same model; without one every such ask is refused, saying why.
      .use(reviewerPlugin);
    if (pod) kernel.use(pod.plugin as Plugin, podConfigOf(plan));
    for (const e of extra) kernel.use(e.plugin, e.config);
    return kernel;
  };

  // The config's plugins: each found, imported and checked apart; one that fails is left out by name.
  const baseDir = plan.configFile !== undefined ? dirname(plan.configFile) : process.cwd();
  const reserved = assemble([]).status().map((s) => s.name);
  let { loaded: extensions, reports } = await loadExtensions(plan.config.plugins, baseDir, reserved);
  if (extensions.length > 0) plan.progress(`plugins from the config: ${extensions.map((e) => `${e.plugin.name} (${e.specifier})`).join(', ')}`);

  plan.progress('starting plugins…');
  let kernel = assemble(extensions);
  let status: Awaited<ReturnType<Kernel['start']>>;
  for (;;) {
    try {
      status = await kernel.start();
      break;
    } catch (error) {
      // A wiring error (a service nobody provides, a cycle) throws before anything runs: when it names
      // a config plugin, that plugin is left out and the rest start; otherwise it is the daemon's own.
      const culprit = error instanceof KernelError ? extensions.find((e) => error.message.includes(`'${e.plugin.name}'`)) : undefined;
      if (!culprit) throw error;
      reports = reports.map((r) => (r.specifier === culprit.specifier ? { specifier: r.specifier, from: culprit.from, state: 'failed', name: culprit.plugin.name, cause: (error as Error).message } : r));
      extensions = extensions.filter((e) => e !== culprit);
      kernel = assemble(extensions);
    }
  }
  // The pod and the config's plugins are additions: the daemon serves without them. Everything else is the safety of every call.
  const optional = new Set(['pod', ...extensions.map((e) => e.plugin.name)]);
  const failed = status.filter((s) => s.state === 'failed');
  const fatal = failed.filter((s) => !optional.has(s.name));
  if (fatal.length > 0) {
    await kernel.stop();
    await docker?.stop().catch(() => 0);
    throw new Error(`plugins failed to start, so the daemon does not run:\n${fatal.map((s) => `  - ${s.name}: ${'cause' in s ? s.cause : 'failed'}`).join('\n')}`);
  }
  const byName = new Map(status.map((s) => [s.name, s]));
  reports = reports.map((r) => {
    const s = r.state === 'loaded' ? byName.get(r.name) : undefined;
    return s?.state === 'failed' ? { specifier: r.specifier, from: r.from, state: 'failed', name: s.name, cause: s.cause } : r;
  });
  for (const r of reports) if (r.state === 'failed' && !failed.some((s) => s.name === r.name)) plan.progress(`WARNING: the plugin ${r.specifier} is not loaded, the daemon runs without it: ${r.cause}`);
  for (const s of failed) plan.progress(`WARNING: the ${s.name} plugin did not start, the daemon runs without it: ${'cause' in s ? s.cause : 'failed'}`);
  return {
    kernel,
    extensions: reports,
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
