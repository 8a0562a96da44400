import { describe, expect, it } from 'vitest';
import { decide } from './sbpl-decide.js';

// The evaluator the profile tests lean on, checked against the SBPL facts it encodes.
describe('decide', () => {
  const profile = [
    '(version 1)',
    '(deny default)',
    '(allow file-write* (subpath "/a"))',
    '(deny file-write* (literal "/a/x"))',
    '(allow file-write-data (regex "^/a/x$"))',
    '(allow network-outbound (remote ip))',
    '(deny network-outbound (remote ip "localhost:80"))',
    '(allow sysctl-read (sysctl-name "hw.ncpu") (sysctl-name-prefix "kern.proc."))',
  ].join('\n');

  it.each([
    ['the last matching rule wins (a later allow)', { op: 'file-write-data', path: '/a/x' }, 'allow'],
    ['the last matching rule wins (a later deny)', { op: 'file-write-unlink', path: '/a/x' }, 'deny'],
    ['x* covers x-…', { op: 'file-write-create', path: '/a/y' }, 'allow'],
    ['subpath is per segment', { op: 'file-write-create', path: '/ab' }, 'deny'],
    ['nothing matches: deny default', { op: 'file-read-data', path: '/a' }, 'deny'],
    ['localhost is 127.0.0.1', { op: 'network-outbound', remoteIp: { host: '127.0.0.1', port: 80 } }, 'deny'],
    ['localhost is not ::ffff:127.0.0.1', { op: 'network-outbound', remoteIp: { host: '::ffff:127.0.0.1', port: 80 } }, 'allow'],
    ['filters in one rule are alternatives', { op: 'sysctl-read', sysctl: 'kern.proc.pid.1' }, 'allow'],
    ['a prefix is a prefix', { op: 'sysctl-read', sysctl: 'kern.procargs2' }, 'deny'],
  ] as const)('%s', (_what, request, expected) => {
    expect(decide(profile, request).action).toBe(expected);
  });

  it('throws on a filter it does not know, instead of ignoring it', () => {
    expect(() => decide('(version 1)(deny default)(allow file-read* (vnode-type DIRECTORY))', { op: 'file-read-data', path: '/' })).toThrow(/vnode-type/);
  });
});
