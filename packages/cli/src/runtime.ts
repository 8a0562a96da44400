import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { type SandboxService, sandboxPlugin } from '@aalis/api-reach';
import { type AccessTier, authorityPlugin, type BoundaryPolicy, createKernel, type Kernel, type OriginTurn, sessions, sessionsPlugin } from '@aalis/core';
import { approvalDesk, approvalPlugin } from '@aalis/plugin-approval';
import { reachBindings, reachPlugin, reachView } from '@aalis/plugin-reach';
import { sandboxOf } from './backends.js';
import { type DataDirChoice, otherInstances } from './data-dir.js';
import { deploymentControlOf } from './deployment-control.js';
import { installOf, terminalIdentity } from './install.js';
import { dropEmptySessionTmp, type KeptSessions } from './kept-sessions.js';
import type { CliIo } from './io.js';
import { ownDir } from './own-dir.js';
import { terminalApprover } from './prompt.js';

/** What a one-shot CLI run (`exec`, `explain`, `policy`) needs. */
export interface LocalOptions {
  readonly tier: AccessTier;
  readonly boundary: BoundaryPolicy;
  /** A real path: the main directory of the turn. */
  readonly cwd: string;
  readonly allowWrite: readonly string[];
  readonly backend: 'linux' | 'darwin' | 'docker' | 'none';
  /** The data directory as {@link chooseDataDir} chose it. */
  readonly data: DataDirChoice;
  readonly io: CliIo;
  readonly approvalTimeoutMs?: number;
  /** The command will run in the sandbox: start what its run waits for (linux: the sandbox's probe) now. */
  readonly warmSandbox?: boolean;
  /**
   * Gives the sandbox service instead of {@link sandboxOf} making one for this run alone (the exec
   * helper's, kept from one command to the next: exec-server.ts). Its `close` is the giver's:
   * the runtime's stop does not call it.
   */
  readonly sandboxService?: (backend: 'linux' | 'darwin' | 'docker', cacheDir: string) => Promise<SandboxService>;
  /**
   * The sessions a run takes its own from (the exec helper's, kept-sessions.ts): the same session,
   * so the same temp and policy, for a run of the same shape, which lets the sandbox prepared ahead
   * for it be used. Its temp is kept for the giver to drop. Without it, a session of this run alone.
   */
  readonly keptSessions?: KeptSessions;
  /** `--network` as given: part of a kept session's shape (kept-sessions.ts). */
  readonly network?: 'on' | 'off';
}

/** A kernel with the reach stack, one session bound to `cwd`, and the owner's turn in it. */
export interface LocalRuntime {
  readonly kernel: Kernel;
  readonly turn: OriginTurn;
  stop(): Promise<void>;
}

/**
 * Starts the plugins the daemon runs that decide a command's reach, in-process, for one command:
 * sessions (not persisted: a CLI run does not change the daemon's last used settings), authority
 * with this terminal's user as owner, approval answered at the terminal, reach, and the sandbox
 * backend. Not the tool dispatcher nor the built-in tools: `exec` calls `runCommand` itself with
 * the credential reach gives (`explain` and `policy` call no tool), so their start (the write
 * tools' temp journal, a daemon's clean-up) would be this process's cost and nobody's use.
 */
export async function startLocal(options: LocalOptions): Promise<LocalRuntime> {
  // one named by hand is made only where its parent is (a typo makes nothing)
  ownDir(options.data.dataDir, 'the data directory', '--data DIR, or AALIS_DATA', options.data.source === '--data' || options.data.source === 'AALIS_DATA' ? 'leaf' : true);
  const who = terminalIdentity();
  const install = installOf();
  // Every other data directory this command can know of is unreadable, and every running daemon's
  // port unreachable: a daemon's token must never be read by a command run from here.
  const others = otherInstances(options.data);
  const kernel = createKernel({ dataDir: options.data.dataDir })
    .use(sessionsPlugin, { persist: false })
    .use(authorityPlugin, { owners: { cli: [who.userId] } })
    .use(approvalPlugin, { timeoutMs: options.approvalTimeoutMs ?? 10 * 60 * 1000 })
    .use(reachPlugin, {
      install: install.dir,
      form: install.form,
      // in a deployment, its config, plugins and tools are control plane, as the daemon's reach has them
      ...(options.data.deployment !== undefined ? { deployment: options.data.deployment, ...deploymentControlOf(options.data.deployment, install) } : {}),
      otherData: others.otherData,
      localPorts: others.ports,
      // run from the owner's terminal, this process already has the terminal's environment
      ownerEnv: 'process',
    })
    .use(terminalApprover(options.io, who));
  const cacheDir = join(options.data.dataDir, 'cache');
  const service =
    options.backend === 'none'
      ? undefined
      : options.sandboxService
        ? lent(await options.sandboxService(options.backend, cacheDir))
        : await sandboxOf(options.backend, process.env, cacheDir, true, { willRun: options.warmSandbox === true });
  if (service) kernel.use(sandboxPlugin(service));
  // linux probes once per process: started now, its answer (from the probe cache while fresh, which
  // answers the overlay probe too; else bubblewrap's checks and one throw-away overlay mount, in
  // child processes) is ready or nearly so when the command asks for it after the kernel's start;
  // a root's run launcher starts once it answers (see sandboxOf)
  const warming = options.warmSandbox && options.backend === 'linux' && service ? service.probe().then(() => undefined, () => undefined) : undefined;
  const stop = async () => {
    await kernel.stop();
    await warming;
  };
  const status = await kernel.start();
  const failed = status.filter((s) => s.state === 'failed');
  if (failed.length > 0) {
    await stop();
    throw new Error(failed.map((s) => `${s.name}: ${'cause' in s ? s.cause : 'failed'}`).join('; '));
  }
  const kept = options.keptSessions;
  const session = kept ? kept.idFor({ cwd: options.cwd, tier: options.tier, boundary: options.boundary, allowWrite: options.allowWrite, dataDir: options.data.dataDir, backend: options.backend, network: options.network }) : `cli-${process.pid}-${Date.now()}`;
  const result = await kernel.get(sessions).change(session, { tier: options.tier, boundary: options.boundary, approver: 'human', runMode: 'execute' });
  if (!result.ok) {
    await stop();
    throw new Error(result.message);
  }
  kernel.get(reachBindings).bind(session, { home: options.cwd, extraRoots: options.allowWrite });
  const turn: OriginTurn = { session: { id: session }, platform: 'cli', speaker: who, authorised: who, inbound: { id: `cli-${Date.now()}` }, category: 'own' };
  return {
    kernel,
    turn,
    stop: async () => {
      const tmp = await sessionTmpOf(kernel, turn);
      if (tmp !== undefined) {
        if (kept) kept.keep(tmp);
        else dropEmptySessionTmp(tmp);
      }
      // a grant remembered in a kept session must not answer the next run (kept-sessions.ts); unreadable: as if it held one
      if (kept && !holdsNoGrant(kernel, session)) kept.retire(session);
      // readonly: the temp is the one place a command can leave anything, and a one-shot's was
      // never given to another run; one left non-empty is not given again either
      else if (kept && options.tier === 'readonly' && tmp !== undefined && !emptyDir(tmp)) kept.retire(session);
      await stop();
    },
  };
}

/**
 * A service this runtime uses and does not own: everything but `close`, so the sandbox plugin's
 * stop leaves it to its giver (a delegate, not a proxy: the service's methods keep their own `this`).
 */
function lent(service: SandboxService): SandboxService {
  const { commitKept, discardKept } = service;
  return {
    backend: service.backend,
    probe: () => service.probe(),
    plan: (request) => service.plan(request),
    run: (request) => service.run(request),
    ...(commitKept ? { commitKept: (id, policy, paths) => commitKept.call(service, id, policy, paths) } : {}),
    ...(discardKept ? { discardKept: (id) => discardKept.call(service, id) } : {}),
  };
}

/** Whether `dir` holds nothing (unreadable: as if it held something). */
function emptyDir(dir: string): boolean {
  try {
    return readdirSync(dir).length === 0;
  } catch {
    return false;
  }
}

/** Whether the session holds no remembered grant, as far as the approval desk can say (false when it cannot). */
function holdsNoGrant(kernel: Kernel, session: string): boolean {
  try {
    return kernel.get(approvalDesk).grants.list(session).length === 0;
  } catch {
    return false;
  }
}

/**
 * The session's temp (`<data>/tmp/<2 hex>/session-…`), named after the session: a one-shot run's
 * session is never met again, and its temp, left empty, was one more directory under `<data>/tmp`
 * for every run, so the run's stop removes it when empty (kept-sessions.ts). Undefined when the
 * session runs no commands, or its reach cannot be read.
 */
async function sessionTmpOf(kernel: Kernel, turn: OriginTurn): Promise<string | undefined> {
  try {
    const reach = await kernel.get(reachView).reachOf(turn);
    return reach.exec === 'none' ? undefined : reach.sessionTmp;
  } catch {
    return undefined;
  }
}
