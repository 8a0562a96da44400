import type { NetworkInterfaceInfo } from 'node:os';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { findSystemTool, hostAddresses, installLoopbackFilter, LoopbackFilterError, loopbackFilterRules } from './loopback-filter.js';

const iface = (address: string, family: 'IPv4' | 'IPv6', internal = false) =>
  ({ address, family, internal, netmask: '', mac: '00:00:00:00:00:00', cidr: null, ...(family === 'IPv6' ? { scopeid: 0 } : {}) }) as NetworkInterfaceInfo;

describe('loopbackFilterRules', () => {
  it('lets lo through, then rejects the localPorts at slirp and the host addresses, TCP with a reset and UDP with port unreachable', () => {
    expect(loopbackFilterRules([5432, 3000, 5432], { v4: ['192.168.1.5', '172.17.0.1'], v6: [] })).toBe(
      [
        'table inet aalis_sandbox {',
        '\tchain output {',
        '\t\ttype filter hook output priority 0; policy accept;',
        '\t\toifname "lo" accept',
        '\t\tip daddr { 10.0.2.0/24, 192.168.1.5, 172.17.0.1 } tcp dport { 3000, 5432 } reject with tcp reset',
        '\t\tip daddr { 10.0.2.0/24, 192.168.1.5, 172.17.0.1 } udp dport { 3000, 5432 } reject with icmp type port-unreachable',
        '\t}',
        '}',
        '',
      ].join('\n'),
    );
  });

  it('adds the IPv6 lines only when the host has IPv6 addresses', () => {
    const rules = loopbackFilterRules([8080], { v4: [], v6: ['fe80::1', '2001:db8::5'] });
    expect(rules).toContain('\t\tip daddr { 10.0.2.0/24 } tcp dport { 8080 } reject with tcp reset\n');
    expect(rules).toContain('\t\tip6 daddr { fe80::1, 2001:db8::5 } tcp dport { 8080 } reject with tcp reset\n');
    expect(rules).toContain('\t\tip6 daddr { fe80::1, 2001:db8::5 } udp dport { 8080 } reject with icmpv6 type port-unreachable\n');
  });

  it('refuses to build rules without ports, or from anything that is not a port', () => {
    expect(() => loopbackFilterRules([], { v4: [], v6: [] })).toThrow(RangeError);
    for (const bad of [0, 65536, 1.5, Number.NaN]) expect(() => loopbackFilterRules([bad], { v4: [], v6: [] })).toThrow(RangeError);
  });

  const nft = findSystemTool('nft');
  const unshare = findSystemTool('unshare');
  it.skipIf(!nft || !unshare)('is a script the installed nft and this kernel accept (checked in a throw-away namespace)', async () => {
    const rules = loopbackFilterRules([22, 5432], hostAddresses());
    // --check: parsed and validated by the kernel, committed nowhere; a fresh namespace all the same
    const r = await execa(unshare!, ['--user', '--map-root-user', '--net', nft!, '--check', '-f', '-'], { input: rules, reject: false });
    expect(r.stderr).toBe('');
    expect(r.exitCode).toBe(0);
  });
});

describe('hostAddresses', () => {
  it('keeps the non-loopback addresses of every interface, once each and sorted', () => {
    const found = hostAddresses({
      lo: [iface('127.0.0.1', 'IPv4', true), iface('::1', 'IPv6', true)],
      eth0: [iface('192.168.1.5', 'IPv4'), iface('fe80::1', 'IPv6')],
      docker0: [iface('172.17.0.1', 'IPv4'), iface('192.168.1.5', 'IPv4')],
      odd: [iface('not-an-address"; flush ruleset', 'IPv4')],
    });
    expect(found).toEqual({ v4: ['172.17.0.1', '192.168.1.5'], v6: ['fe80::1'] });
  });
});

describe('installLoopbackFilter by nsenter + nft', () => {
  it("refuses a pid in the daemon's own network namespace before starting anything", async () => {
    const started: string[][] = [];
    const start = async (_name: string, argv: readonly [string, ...string[]]) => {
      started.push([...argv]);
      throw new Error('must not be started');
    };
    const err = await installLoopbackFilter({ kind: 'exec', start, tools: { nft: '/usr/sbin/nft', nsenter: '/usr/bin/nsenter' }, rootMapped: false }, process.pid, 'table inet t {\n}\n').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LoopbackFilterError);
    expect((err as Error).message).toContain("the sandbox shares the daemon's network namespace");
    expect(started).toEqual([]);
  });
});
