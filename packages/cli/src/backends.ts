import { join } from 'node:path';
import type { SandboxService } from '@aalis/api-reach';

/** What {@link sandboxOf} takes besides the backend and its cache. */
export interface SandboxOfOptions {
  readonly onWarning?: (line: string) => void;
  readonly willRun?: boolean;
  /**
   * Linux, a kept service whose every run is a session of its own (the exec helper, exec-server.ts):
   * the scan's walks are kept for the next run by the reuse file's key, which names a session's
   * temp by a token, and they run on the calling thread: the helper runs from the exec bundle (no
   * worker entry) and answers nothing else meanwhile (measured: 100 against 124 ms a command with a
   * bundled walk thread, 12 commands each).
   */
  readonly keptWalks?: boolean;
}

/**
 * The sandbox service of a backend, its package loaded only now (a run loads one backend, never the
 * others'). Docker needs an image: `AALIS_DOCKER_IMAGE`. Linux run by root: `AALIS_ROOT_UID_MAP=off`
 * opts out of mapping commands off the host's uid 0 (sandbox-linux README). `cacheDir` (in
 * the data directory, which no sandboxed command can write) keeps the backend's last good probe
 * for ten minutes, so a later process (each `aalis exec`) does not probe again while it is fresh.
 * `oneShot` (one command, then the process ends) keeps nothing for a next run. A daemon's runs
 * start from a kept-alive launcher, an ordinary user's too (sandbox-linux `launcher: all`). A daemon (not
 * `oneShot`) prepares the next sandbox of a policy ahead (sandbox-linux `prepare`; only a root
 * daemon's runs through the launcher are prepared), from a conversation's second call (`preparedFrom`); `AALIS_PREPARE=off` opts out. A daemon's
 * sandboxes also share one cpu cgroup, weighted as one session (sandbox-linux `cpuShare`); `AALIS_CPU_SHARE=off` opts out.
 * A root run's host is made read-only by its root map step, not by bwrap (sandbox-linux `stepReadOnly`);
 * `AALIS_STEP_READ_ONLY=off` leaves it to bwrap (for comparing, or a `bwrap` wrapper that writes on the host).
 * `onWarning` gets what the Linux backend had to do on its own (a sandbox that did not end within
 * its bound after its kill, and what was killed to end it), for the daemon's log.
 * `willRun` (a one-shot process about to run a command): linux starts a root run's launcher as soon
 * as its probe answers (sandbox-linux `warmLauncher`), so its python start is not waited for after the scan.
 */
export async function sandboxOf(backend: 'linux' | 'darwin' | 'docker', env: NodeJS.ProcessEnv = process.env, cacheDir?: string, oneShot = false, more: SandboxOfOptions = {}): Promise<SandboxService> {
  const { onWarning, willRun = false, keptWalks = false } = more;
  switch (backend) {
    case 'linux': {
      const { createLinuxSandbox } = await import('@aalis/sandbox-linux');
      const reuseFile = cacheDir !== undefined ? { reuseFile: join(cacheDir, 'linux-scan-reuse.json') } : {};
      return createLinuxSandbox({
        ...(cacheDir !== undefined ? { probeCache: { file: join(cacheDir, 'linux-probe.json') } } : {}),
        // One command and out: a walk thread's start-up, the listings kept for a next run and the
        // tree watcher are a daemon's savings and only this process's cost.
        // The scan's walks are kept in the data directory instead (sandbox-linux scan-reuse-file.ts):
        // the next process lists again only the directories whose stamps changed.
        ...(oneShot ? { hostWalks: 'inline', scan: { noCache: true, ...reuseFile } } : {}),
        ...(keptWalks ? { hostWalks: 'inline', scan: { ...reuseFile } } : {}),
        // AALIS_ROOT_UID_MAP=off: a root daemon's commands run as the host's uid 0 (anything else keeps the map, which fails closed)
        ...(env.AALIS_ROOT_UID_MAP === 'off' ? { rootUidMap: 'off' as const } : {}),
        // AALIS_STEP_READ_ONLY=off: bwrap makes the host read-only, as before (the view inside is the same)
        ...(env.AALIS_STEP_READ_ONLY === 'off' ? { stepReadOnly: 'off' as const } : {}),
        // a daemon's runs all start from its kept-alive launcher, an ordinary user's too, whose child
        // mounts the overlays itself (sandbox-linux `launcher: all`); one-shot: a python start for one run
        ...(oneShot ? {} : { launcher: 'all' as const }),
        // a daemon runs many commands: the next sandbox of a policy is set up while it waits (one-shot: nothing to gain)
        prepare: oneShot || env.AALIS_PREPARE === 'off' ? ('off' as const) : ('on' as const),
        // from a conversation's second call: one that calls once would hold prepared sandboxes (and the pool's places) for nothing
        preparedFrom: 2,
        // a daemon's sandboxes weigh as one session (one cpu cgroup), not one each; one-shot: no loop to keep answering
        cpuShare: oneShot || env.AALIS_CPU_SHARE === 'off' ? ('off' as const) : ('on' as const),
        // a daemon's cold runs start their cgroup move's wait early (sandbox-linux cgroupLead); one-shot:
        // measured no faster (210 against 214 ms, 22 interleaved runs), and a shell and a cgroup for nothing
        ...(oneShot ? { cgroupLead: 'off' as const } : {}),
        ...(onWarning ? { onWarning } : {}),
        ...(willRun ? { warmLauncher: true } : {}),
      });
    }
    case 'darwin': {
      const { createDarwinSandbox } = await import('@aalis/sandbox-darwin');
      return createDarwinSandbox();
    }
    case 'docker': {
      const { dockerSandboxFromEnv } = await import('./docker-backend.js');
      return await dockerSandboxFromEnv(env, cacheDir);
    }
  }
}
