import { readFileSync, statSync } from 'node:fs';
import { isIPv4, isIPv6 } from 'node:net';
import { type NetworkInterfaceInfo, networkInterfaces } from 'node:os';
import type { ApplyFilter, NetHelper, StartNetHelper } from './net-helper.js';
import { findExecutable } from './tools.js';
import { AalisError } from '@aalis/core';
import type { LinuxErrorCode } from './linux-error-codes.js';

/*
 * Network `on` keeps the host's loopback reachable at slirp4netns's gateway, as the contract
 * wants (`on` = outbound IP minus `localPorts`), and refuses the policy's `localPorts` with an
 * nftables rule set installed in the sandbox's own network namespace before its command runs.
 * The command cannot take the rules down: bwrap runs it without capabilities (`--cap-drop ALL`;
 * unprivileged it is also in a nested user namespace that owns nothing), and the seccomp filter
 * refuses it a NETLINK_NETFILTER socket.
 */

/**
 * slirp4netns's virtual network (its default `--cidr`). Its gateway 10.0.2.2 is the host's
 * 127.0.0.1; the whole range is refused for the `localPorts` so that no other alias a later
 * libslirp may map to the host stays open. The sandbox's own address in it (10.0.2.100) is local
 * and goes over `lo`, which the rules let through.
 */
export const SLIRP_NETWORK = '10.0.2.0/24';

/** The nftables table the rules live in (inside the sandbox's network namespace only). */
export const FILTER_TABLE = 'aalis_sandbox';

/** The fix named when `nft` is missing: network `on` then closes the whole host loopback. */
export const INSTALL_NFT = 'sudo apt-get install -y nftables';

/** The host's own addresses: a daemon listening on all of them is reachable at each through slirp. */
export interface HostAddresses {
  readonly v4: readonly string[];
  readonly v6: readonly string[];
}

/**
 * The host's non-loopback addresses, from `os.networkInterfaces()` (the daemon's network
 * namespace, which is the one slirp4netns connects from). Loopback ones are left out: in the
 * sandbox 127.0.0.1 and ::1 are its own. Anything that is not a literal address is dropped, so
 * nothing but addresses reaches the rule text.
 */
export function hostAddresses(interfaces: NodeJS.Dict<NetworkInterfaceInfo[]> = networkInterfaces()): HostAddresses {
  const v4 = new Set<string>();
  const v6 = new Set<string>();
  for (const info of Object.values(interfaces).flat()) {
    if (!info || info.internal) continue;
    if (info.family === 'IPv4' && isIPv4(info.address)) v4.add(info.address);
    else if (info.family === 'IPv6' && isIPv6(info.address)) v6.add(info.address);
  }
  return { v4: [...v4].sort(), v6: [...v6].sort() };
}

/** A port list nft accepts: integers 1 to 65535, sorted, without repeats. Throws on anything else. */
function portSet(ports: readonly number[]): string {
  for (const p of ports) {
    if (!Number.isInteger(p) || p < 1 || p > 65535) throw new RangeError(`not a port: ${String(p)}`);
  }
  return `{ ${[...new Set(ports)].sort((a, b) => a - b).join(', ')} }`;
}

/**
 * The nft script (`nft -f -`) for one sandbox: an `inet` table whose output chain lets the
 * sandbox's own `lo` through, then rejects TCP (with a reset) and UDP (with ICMP port
 * unreachable) to `localPorts` at slirp's network and at every host address. Everything else is
 * accepted. Pure, so its text is unit-tested; `localPorts` must not be empty.
 */
export function loopbackFilterRules(localPorts: readonly number[], host: HostAddresses): string {
  if (localPorts.length === 0) throw new RangeError('no localPorts: there is nothing to filter');
  const ports = portSet(localPorts);
  const v4 = `{ ${[SLIRP_NETWORK, ...host.v4].join(', ')} }`;
  const lines = [
    `ip daddr ${v4} tcp dport ${ports} reject with tcp reset`,
    `ip daddr ${v4} udp dport ${ports} reject with icmp type port-unreachable`,
  ];
  // slirp4netns runs without --enable-ipv6, so IPv6 has no way out today; refused all the same
  if (host.v6.length > 0) {
    const v6 = `{ ${host.v6.join(', ')} }`;
    lines.push(`ip6 daddr ${v6} tcp dport ${ports} reject with tcp reset`, `ip6 daddr ${v6} udp dport ${ports} reject with icmpv6 type port-unreachable`);
  }
  return [
    `table inet ${FILTER_TABLE} {`,
    '\tchain output {',
    '\t\ttype filter hook output priority 0; policy accept;',
    '\t\toifname "lo" accept',
    ...lines.map((l) => `\t\t${l}`),
    '\t}',
    '}',
    '',
  ].join('\n');
}

/** Where system tools live when the daemon's PATH (an ordinary user's) has no sbin directories. */
const SYSTEM_PATH = '/usr/local/sbin:/usr/sbin:/sbin:/usr/local/bin:/usr/bin:/bin';

/** An executable by name on PATH, then in the system directories; an absolute path as it is. */
export function findSystemTool(name: string): string | undefined {
  return findExecutable(name) ?? (name.includes('/') ? undefined : findExecutable(name, SYSTEM_PATH));
}

/** What installing the filter needs: nft, and nsenter (util-linux) to run it in the sandbox's namespaces. */
export interface FilterTools {
  readonly nft: string;
  readonly nsenter: string;
}

/** nft and nsenter if both are there; `nft` is the `nft` option of LinuxSandboxOptions. */
export function findFilterTools(nft: string): FilterTools | undefined {
  const n = findSystemTool(nft);
  const e = findSystemTool('nsenter');
  return n && e ? { nft: n, nsenter: e } : undefined;
}

/** nft could not install the rules: the run fails closed, and this is the fix it names. */
export class LoopbackFilterError extends AalisError<LinuxErrorCode> {
  override readonly name = 'LoopbackFilterError';
  declare readonly fix: string;
  constructor(message: string) {
    super('loopback-filter', message, {
      fix: `load nf_tables (\`sudo modprobe nf_tables\`) and check \`nft\` works; without nft installed, network "on" closes the whole host loopback instead; see \`aalis doctor\``,
    });
  }
}

/**
 * Resolves once bwrap has written the uid map of the sandbox's user namespace, which it does just
 * after reporting the pid. Before that the daemon's uid means nothing there, and nft, run through
 * nsenter, would lose the capabilities it gets there on exec.
 */
async function idsMapped(pid: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let map: string;
    try {
      map = readFileSync(`/proc/${pid}/uid_map`, 'utf8');
    } catch {
      throw new LoopbackFilterError('the sandbox ended before its user namespace was set up');
    }
    if (map.trim() !== '') return;
    if (Date.now() > deadline) throw new LoopbackFilterError('bubblewrap did not map the ids of the sandbox user namespace');
    await new Promise((r) => setTimeout(r, 1));
  }
}

/** Whether `pid`'s network namespace is this process's own; a pid that cannot be looked at counts as the same (fail closed). */
function sharesOurNetwork(pid: number): boolean {
  try {
    const theirs = statSync(`/proc/${pid}/ns/net`);
    const ours = statSync('/proc/self/ns/net');
    return theirs.ino === ours.ino && theirs.dev === ours.dev;
  } catch {
    return true;
  }
}

/** The libnftables a root daemon's launcher loads to apply the filter without an nft process (the `nftLibrary` option's default). */
export const NFT_LIBRARY = 'libnftables.so.1';

/**
 * How the filter is put in place: `exec` runs nsenter + nft by `start` (a fork of the daemon, or
 * the launcher's child); `launcher`: the kept-alive launcher's child joins the sandbox's network
 * namespace and applies the script with libnftables itself, no process started (net-helper.ts
 * `launcherFilter`). Only a root daemon has a launcher: as the host's root it needs no user
 * namespace to join the sandbox's network namespace, so it does not wait for bwrap's id maps.
 */
export type FilterRoute =
  | { readonly kind: 'exec'; readonly start: StartNetHelper; readonly tools: FilterTools; readonly rootMapped: boolean }
  | { readonly kind: 'launcher'; readonly apply: ApplyFilter };

/**
 * Installs `rules` in the network namespace of the sandbox whose pid 1 is `pid`, from the host,
 * while bwrap waits in its setup (see network.ts); safe to run alongside slirp4netns. By `exec`,
 * `nsenter` joins the sandbox's user namespace (it owns the network namespace; the daemon's uid is
 * 0 there, unprivileged too, since bwrap maps it to 0 for `--dev` during setup) and its network
 * namespace, keeping the daemon's credentials (`rootMapped`: taking the namespace's 0), and runs
 * nft with the script on stdin. By `launcher`, see {@link FilterRoute}. nft applies a script as one
 * transaction: it ends 0 only with every rule in place. Rejects with {@link LoopbackFilterError}
 * otherwise (not started, failed, killed at `timeoutMs`).
 */
export async function installLoopbackFilter(route: FilterRoute, pid: number, rules: string, timeoutMs = 5000): Promise<void> {
  let proc: NetHelper;
  try {
    if (route.kind === 'launcher') proc = await route.apply(pid, rules);
    else {
      await idsMapped(pid, timeoutMs);
      // nsenter would join whatever namespace the pid has: never the daemon's own (the host's)
      if (sharesOurNetwork(pid)) throw new LoopbackFilterError("the sandbox shares the daemon's network namespace: no filter is put there");
      // a root daemon's mapped sandbox (root-map.ts) maps 0 to another host id, not the daemon's: nft
      // must take that 0 (nsenter's default) or it loses the namespace's capabilities on exec
      const creds = route.rootMapped ? [] : ['--preserve-credentials'];
      proc = await route.start('nft', [route.tools.nsenter, ...creds, `--user=/proc/${pid}/ns/user`, `--net=/proc/${pid}/ns/net`, route.tools.nft, '-f', '-'], rules);
    }
  } catch (e) {
    if (e instanceof LoopbackFilterError) throw e;
    throw new LoopbackFilterError(`nft could not be started: ${(e as Error).message}`);
  }
  let stderr = '';
  proc.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    proc.kill();
  }, timeoutMs);
  const r = await proc.ended;
  clearTimeout(timer);
  proc.closeExit();
  if (r.exitCode !== 0) {
    const why = stderr.trim() || (timedOut ? 'timed out' : (r.lost ?? `exit ${r.exitCode ?? r.signal}`));
    throw new LoopbackFilterError(`nft could not install the localPorts filter: ${why}`);
  }
}
