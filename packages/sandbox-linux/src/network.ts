import type { Readable, Writable } from 'node:stream';
import { execa } from 'execa';

/**
 * Network `on` without the host's network namespace: the sandbox keeps its own namespace and
 * slirp4netns, a userspace TCP/IP stack, gives it a tap device whose traffic leaves through
 * ordinary sockets of the host. `--disable-host-loopback` refuses the gateway's mapping to the
 * host's 127.0.0.1, so no port on the host's loopback (the policy's `localPorts` among them) can
 * be reached; the sandbox's own 127.0.0.1 is its own. Abstract unix sockets are per network
 * namespace, so the host's are out of reach too.
 */

/** bwrap writes `{"child-pid": N}` here once the sandbox exists. */
export const INFO_FD = 4;
/** bwrap waits on this fd before starting the command, until slirp4netns is ready. */
export const BLOCK_FD = 5;

/**
 * bwrap arguments for the handshake. bwrap's `--disable-userns` is left out with network on: it
 * moves the sandbox into a nested user namespace during setup, so slirp4netns could enter the
 * wrong one and be refused the network namespace. New user namespaces stay refused by the
 * seccomp filter (clone/unshare with CLONE_NEWUSER, clone3).
 */
export const NETWORK_ON_FLAGS = ['--info-fd', String(INFO_FD), '--block-fd', String(BLOCK_FD)] as const;

/** A running slirp4netns for one sandbox. */
export interface Slirp {
  stop(): Promise<void>;
}

/** Reads bwrap's info fd until the child pid is known. */
export function readChildPid(info: Readable, timeoutMs = 5000): Promise<number> {
  return new Promise((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => done(new Error('bubblewrap did not report the sandbox pid')), timeoutMs);
    const onData = (d: Buffer) => {
      text += d.toString();
      const m = /"child-pid"\s*:\s*(\d+)/.exec(text);
      if (m) done(undefined, Number(m[1]));
    };
    const onEnd = () => done(new Error(`bubblewrap ended before reporting the sandbox pid: ${text.trim()}`));
    function done(err?: Error, pid?: number) {
      clearTimeout(timer);
      info.off('data', onData);
      info.off('end', onEnd);
      info.off('close', onEnd);
      if (err) reject(err);
      else resolve(pid!);
    }
    info.on('data', onData);
    info.on('end', onEnd);
    info.on('close', onEnd);
  });
}

/** Starts slirp4netns for the sandbox whose pid-1 is `pid` and waits until its device is configured. */
export async function startSlirp(slirp4netns: string, pid: number, timeoutMs = 5000): Promise<Slirp> {
  const proc = execa(
    slirp4netns,
    [
      '--configure',
      '--mtu=65520',
      '--disable-host-loopback',
      '--ready-fd=3',
      '--exit-fd=4',
      // the user namespace that owns the sandbox's network namespace (see NETWORK_ON_FLAGS)
      `--userns-path=/proc/${pid}/ns/user`,
      String(pid),
      'tap0',
    ],
    { env: {}, extendEnv: false, cwd: '/', reject: false, stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'], buffer: false },
  );
  const fds = proc.stdio as unknown as (Readable & Writable)[];
  const ready = fds[3]!;
  const exit = fds[4]!;
  let stderr = '';
  proc.stderr?.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const stop = async () => {
    exit.end();
    proc.kill('SIGKILL');
    await proc;
  };
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('slirp4netns did not become ready')), timeoutMs);
      ready.once('data', () => {
        clearTimeout(timer);
        resolve();
      });
      proc.then((r) => {
        clearTimeout(timer);
        reject(new Error(`slirp4netns exited (${r.exitCode ?? r.signal}): ${stderr.trim()}`));
      });
    });
  } catch (e) {
    await stop();
    throw e;
  }
  return { stop };
}
