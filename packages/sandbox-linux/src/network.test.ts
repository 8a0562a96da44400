import { createSocket, type Socket } from 'node:dgram';
import { existsSync, mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { SandboxUnavailableError } from '@aalis/api-reach';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execa } from 'execa';
import { FILTER_TABLE, findSystemTool } from './loopback-filter.js';
import { makeScene, req, type Scene, workspacePolicy } from './scene.testing.js';
import { createLinuxSandbox } from './service.js';
import { syncAtExec } from './network.js';

const sb = createLinuxSandbox();
/** The same service on a machine without nft. */
const noNft = createLinuxSandbox({ nft: '/nonexistent/nft' });
const nft = findSystemTool('nft');
let s: Scene;
const servers: (Server | Socket)[] = [];

function listen(where: string | { host: string }): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer((c) => c.end('hello\n'));
    servers.push(srv);
    srv.once('error', reject);
    if (typeof where === 'string') srv.listen(where, () => resolve(0));
    else srv.listen(0, where.host, () => resolve((srv.address() as { port: number }).port));
  });
}

/** A UDP listener on 127.0.0.1 that answers every datagram with `hello`. */
function listenUdp(): Promise<number> {
  return new Promise((resolve) => {
    const sock = createSocket('udp4');
    servers.push(sock);
    sock.on('message', (_m, from) => sock.send('hello\n', from.port, from.address));
    sock.bind(0, '127.0.0.1', () => resolve(sock.address().port));
  });
}

/**
 * Python that first serves `hello` on its own 127.0.0.1:`ownPort` (unless 0), then tries each
 * `tcp|host|port` or `udp|host|port` target and prints what each answered (or the error's class)
 * as JSON. One run for many targets: a sandbox start is the slow part.
 */
function probe(ownPort: number, targets: string[]): [string, ...string[]] {
  const code = `
import json, socket, sys, threading
own = int(sys.argv[1])
if own:
    l = socket.socket(); l.bind(('127.0.0.1', own)); l.listen(8)
    def serve():
        while True:
            c, _ = l.accept(); c.sendall(b'hello\\n'); c.close()
    threading.Thread(target=serve, daemon=True).start()
out = {}
for t in sys.argv[2:]:
    kind, host, port = t.split('|')
    try:
        if kind == 'tcp':
            c = socket.create_connection((host, int(port)), timeout=3)
        else:
            c = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); c.settimeout(3); c.connect((host, int(port))); c.send(b'x')
        out[t] = c.recv(10).decode().strip()
    except Exception as e:
        out[t] = type(e).__name__
print(json.dumps(out))
`;
  return ['python3', '-c', code, String(ownPort), ...targets];
}

/** A python one-liner that connects and prints what it got, or the error's class. */
function connect(target: string): [string, ...string[]] {
  const [kind, a, b] = target.split('|');
  const code =
    kind === 'unix'
      ? `import socket\ns=socket.socket(socket.AF_UNIX)\ntry:\n s.connect(${JSON.stringify(a)}); print(s.recv(10).decode().strip())\nexcept Exception as e: print(type(e).__name__)`
      : `import socket\ntry:\n s=socket.create_connection((${JSON.stringify(a)},${b}),timeout=3); print(s.recv(10).decode().strip())\nexcept Exception as e: print(type(e).__name__)`;
  return ['python3', '-c', code];
}

const external = Object.values(networkInterfaces())
  .flat()
  .find((i) => i && i.family === 'IPv4' && !i.internal)?.address;

beforeAll(() => {
  s = makeScene();
});
afterAll(() => {
  for (const srv of servers) srv.close();
  s.cleanup();
});

describe('network', { timeout: 120_000 }, () => {
  it('off: no network at all, not even the host loopback', async () => {
    const lo = await listen({ host: '127.0.0.1' });
    const r = await sb.run(req(s, connect(`tcp|127.0.0.1|${lo}`)));
    expect(r.stdout.trim()).toBe('ConnectionRefusedError'); // the sandbox's own, empty loopback
    const ext = await sb.run(req(s, ['sh', '-c', 'ip -o link | grep -v " lo:" | wc -l']));
    expect(ext.stdout.trim()).toBe('0');
  });

  // "Outbound" is a listener on this machine's non-loopback address: the only non-loopback
  // target this workplace allows. Without such an address the outbound half cannot be shown.
  it.skipIf(!external || !nft)('on: outbound IP works; only the localPorts on the host are refused, the rest of its loopback answers', async () => {
    const out = await listen({ host: external! });
    const denied = await listen({ host: '127.0.0.1' });
    const deniedEverywhere = await listen({ host: '0.0.0.0' }); // reachable at the host's LAN address too
    const other = await listen({ host: '127.0.0.1' });
    const udpDenied = await listenUdp();
    const udpOther = await listenUdp();
    const policy = workspacePolicy(s, { network: 'on', localPorts: [denied, deniedEverywhere, udpDenied] });
    const t = {
      outbound: `tcp|${external}|${out}`,
      denied: `tcp|10.0.2.2|${denied}`,
      deniedAtGateway: `tcp|10.0.2.2|${deniedEverywhere}`,
      deniedAtLan: `tcp|${external}|${deniedEverywhere}`,
      other: `tcp|10.0.2.2|${other}`,
      udpDenied: `udp|10.0.2.2|${udpDenied}`,
      udpOther: `udp|10.0.2.2|${udpOther}`,
      // a localPort number on the sandbox's own loopback, served by the command itself
      own: `tcp|127.0.0.1|${denied}`,
    };
    const r = await sb.run(req(s, probe(denied, Object.values(t)), { policy }));
    expect(r.stderr).toBe('');
    const got = JSON.parse(r.stdout);
    // a rejected datagram of our own fails its send() with EPERM (the ICMP error comes after)
    expect(got[t.udpDenied]).toMatch(/^(ConnectionRefusedError|PermissionError)$/);
    expect({ ...got, [t.udpDenied]: 'refused' }).toEqual({
      [t.outbound]: 'hello',
      [t.denied]: 'ConnectionRefusedError',
      [t.deniedAtGateway]: 'ConnectionRefusedError',
      [t.deniedAtLan]: 'ConnectionRefusedError',
      [t.other]: 'hello',
      [t.udpDenied]: 'refused',
      [t.udpOther]: 'hello',
      [t.own]: 'hello',
    });
  });

  it.skipIf(!nft)('on: the command cannot read or remove the rules, as root, even with a seccomp filter that allows all', async () => {
    const denied = await listen({ host: '127.0.0.1' });
    const policy = workspacePolicy(s, { network: 'on', localPorts: [denied] });
    const allowAll = Buffer.alloc(8);
    allowAll.writeUInt16LE(0x06, 0);
    allowAll.writeUInt32LE(0x7fff0000, 4);
    // the default filter refuses the netlink socket; the control shows the capabilities alone suffice
    for (const service of [sb, createLinuxSandbox({ seccompFilter: allowAll })]) {
      const script = `${nft} list ruleset; echo list=$?; ${nft} flush ruleset; echo flush=$?; grep CapEff /proc/self/status; "$@"`;
      const r = await service.run(req(s, ['sh', '-c', script, 'sh', ...probe(0, [`tcp|10.0.2.2|${denied}`])], { policy }));
      const lines = r.stdout.trim().split('\n');
      expect(lines.slice(0, 3)).toEqual([expect.stringMatching(/^list=[1-9]/), expect.stringMatching(/^flush=[1-9]/), 'CapEff:\t0000000000000000']);
      expect(r.stderr).toContain('Operation not permitted');
      expect(JSON.parse(lines[3]!)).toEqual({ [`tcp|10.0.2.2|${denied}`]: 'ConnectionRefusedError' });
    }
  });

  it.skipIf(!external)('on without nft: the host loopback is closed entirely, outbound works; with no localPorts it is open', async () => {
    const out = await listen({ host: external! });
    const denied = await listen({ host: '127.0.0.1' });
    const other = await listen({ host: '127.0.0.1' });
    const targets = [`tcp|${external}|${out}`, `tcp|10.0.2.2|${denied}`, `tcp|10.0.2.2|${other}`];
    const closed = await noNft.run(req(s, probe(0, targets), { policy: workspacePolicy(s, { network: 'on', localPorts: [denied] }) }));
    expect(closed.exitCode).toBe(0);
    const got = JSON.parse(closed.stdout);
    expect(got[targets[0]!]).toBe('hello');
    expect(got[targets[1]!]).toMatch(/^(ConnectionRefusedError|OSError)$/);
    expect(got[targets[2]!]).toMatch(/^(ConnectionRefusedError|OSError)$/); // stricter than the policy
    // nothing to filter: the loopback is opened without nft
    const open = await noNft.run(req(s, probe(0, targets.slice(2)), { policy: workspacePolicy(s, { network: 'on', localPorts: [] }) }));
    expect(JSON.parse(open.stdout)).toEqual({ [targets[2]!]: 'hello' });
    const check = (await noNft.probe()).checks.find((c) => c.name === 'loopback-filter');
    expect(check).toMatchObject({ ok: false, fix: 'sudo apt-get install -y nftables' });
    expect(check?.detail).toContain('closes the host loopback entirely');
    expect((await noNft.probe()).available).toBe(true);
  });

  it('on: an nft that fails stops the run before the command starts (fail closed, the fix named)', async () => {
    const marker = join(s.ws, 'ran-with-failed-filter');
    const broken = createLinuxSandbox({ nft: '/bin/false' });
    const policy = workspacePolicy(s, { network: 'on', localPorts: [5432] });
    const err = await broken.run(req(s, ['sh', '-c', `touch ${marker}`], { policy })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SandboxUnavailableError);
    expect((err as SandboxUnavailableError).message).toContain('nft could not install the localPorts filter');
    expect((err as SandboxUnavailableError).fix).toContain('nf_tables');
    expect(existsSync(marker)).toBe(false);
  });

  // a root daemon's launcher applies the filter with libnftables in its own child (no nsenter, no nft)
  it.skipIf(!nft || process.getuid?.() !== 0)('on, a root daemon: the launcher puts the filter in the sandbox namespace, never the host one; a libnftables it cannot load stops the run', async () => {
    const hostTable = () => execa(nft!, ['list', 'table', 'inet', FILTER_TABLE], { reject: false });
    expect((await hostTable()).exitCode).not.toBe(0);
    const denied = await listen({ host: '127.0.0.1' });
    const other = await listen({ host: '127.0.0.1' });
    const policy = workspacePolicy(s, { network: 'on', localPorts: [denied] });
    const r = await sb.run(req(s, probe(0, [`tcp|10.0.2.2|${denied}`, `tcp|10.0.2.2|${other}`]), { policy }));
    expect(JSON.parse(r.stdout)).toEqual({ [`tcp|10.0.2.2|${denied}`]: 'ConnectionRefusedError', [`tcp|10.0.2.2|${other}`]: 'hello' });
    expect((await hostTable()).exitCode).not.toBe(0); // the host's own ruleset never got the table
    const marker = join(s.ws, 'ran-without-library');
    const broken = createLinuxSandbox({ nftLibrary: join(s.root, 'no-such-libnftables.so.1') });
    const err = await broken.run(req(s, ['sh', '-c', `touch ${marker}`], { policy })).catch((e: unknown) => e);
    await broken.close();
    expect(err).toBeInstanceOf(SandboxUnavailableError);
    expect((err as SandboxUnavailableError).message).toMatch(/nft could not be started: .*no-such-libnftables\.so\.1/);
    expect((err as SandboxUnavailableError).fix).toContain('nf_tables');
    expect(existsSync(marker)).toBe(false);
  });
});

describe('unix sockets', { timeout: 120_000 }, () => {
  it('connects only to sockets under unixSockets; one elsewhere is refused though its directory is readable', async () => {
    const outsideDir = join(s.root, 'agent');
    mkdirSync(outsideDir);
    const outside = join(outsideDir, 'agent.sock');
    const inside = join(s.ws, 'dev.sock');
    await listen(outside);
    await listen(inside);
    const ls = await sb.run(req(s, ['ls', outsideDir]));
    expect(ls.stdout.trim()).toBe('agent.sock'); // reads there are allowed
    expect((await sb.run(req(s, connect(`unix|${inside}`)))).stdout.trim()).toBe('hello');
    // the empty read-only file over a hidden socket: ECONNREFUSED, or EACCES first where it is
    // not writable to the command (root without capabilities)
    const hidden = /^(ConnectionRefusedError|PermissionError)$/;
    expect((await sb.run(req(s, connect(`unix|${outside}`)))).stdout.trim()).toMatch(hidden);
    // a socket the daemon itself listens on, e.g. its control socket in the data dir
    const ctl = join(s.control, 'daemon.sock');
    await listen(ctl);
    expect((await sb.run(req(s, connect(`unix|${ctl}`)))).stdout.trim()).toMatch(hidden);
  });
});

describe('where bwrap waits while the network is set up', () => {
  it('network on, run by root, no placeholders: just before the command (after its mounts); otherwise at the start of its setup', () => {
    expect(syncAtExec('on', 0, 0)).toBe(true);
    // unprivileged, bwrap nests a user namespace during setup that does not own the network namespace
    expect(syncAtExec('on', 65534, 0)).toBe(false);
    expect(syncAtExec('on', undefined, 0)).toBe(false);
    // placeholders must exist before bwrap's first mount
    expect(syncAtExec('on', 0, 1)).toBe(false);
    expect(syncAtExec('off', 0, 0)).toBe(false);
  });

  it.skipIf(process.getuid?.() !== 0)("a root daemon's network-on plan: --block-fd instead of the setup's --file", async () => {
    const on = await sb.plan(req(s, ['true'], { policy: workspacePolicy(s, { network: 'on', localPorts: [5432] }) }));
    expect(on.argv.join(' ')).toContain(`--json-status-fd 4 --block-fd 5`);
    expect(on.argv).not.toContain('--file');
    const off = await sb.plan(req(s, ['true']));
    expect(off.argv.join(' ')).toContain('--json-status-fd 4 --file 5 /.aalis-setup-sync');
    expect(off.argv).not.toContain('--block-fd');
  });
});
