import type { SandboxPolicy } from '@aalis/api-reach';
import { describe, expect, it } from 'vitest';
import hostile from '../test/fixtures/hostile-paths.json' with { type: 'json' };
import { readonlyPolicy, USER_DIRS, workspacePolicy } from '../test/policies.js';
import { readSbpl, stringsOf } from '../test/sbpl-reader.js';
import { DarwinProfileError } from './darwin-profile-error.js';
import { defineArgs } from './profile-params.js';
import { seatbeltInvocation, seatbeltProfile } from './seatbelt-profile.js';
import { sbplString } from './sbpl-string.js';

// The run path passes every policy string as a -D parameter; the inline profile (golden files,
// `aalis policy`) must say exactly the same thing. Substituting the parameters back proves it.
const base = '/Users/ana/src/app';
const hostilePolicy = (tail: string): SandboxPolicy => ({
  ...readonlyPolicy,
  readDeny: [{ path: `${base}/${tail}/secret`, except: [{ path: `${base}/${tail}/secret/ok` }] }],
  readAllowWithin: [`${base}/${tail}/tmp`],
  write: [`${base}/${tail}`],
  writeDeny: [{ path: `${base}/${tail}/.git` }],
  controlDeny: [{ path: `${base}/${tail}/control` }],
  network: 'on',
  unixSockets: [`${base}/${tail}`],
});

const cases: [string, SandboxPolicy, { userDirs?: typeof USER_DIRS }][] = [
  ['readonly', readonlyPolicy, {}],
  ['workspace', workspacePolicy, {}],
  ['workspace with the per-user folders', workspacePolicy, { userDirs: USER_DIRS }],
  ...hostile.accepted.map((entry) => [`hostile: ${entry.name}`, hostilePolicy(entry.tail), {}] as [string, SandboxPolicy, object]),
];

describe('seatbeltInvocation', () => {
  it.each(cases)('%s: the parameters substituted back give the inline profile', (_name, policy, host) => {
    const { profile, params } = seatbeltInvocation(policy, host);
    const substituted = profile.replace(/\(param "(P\d+)"\)/g, (_m, key: string) => sbplString(params[key]!, 'test'));
    expect(substituted).toBe(seatbeltProfile(policy, host));
  });

  it.each(cases)('%s: every parameter is used, every use is defined', (_name, policy, host) => {
    const { profile, params } = seatbeltInvocation(policy, host);
    const used = new Set([...profile.matchAll(/\(param "([^"]*)"\)/g)].map((m) => m[1]!));
    expect([...used].sort()).toEqual(Object.keys(params).sort());
  });

  it.each(hostile.accepted.map((entry) => [entry.name, entry.tail]))('hostile %s: the profile text carries none of the path, only parameter names', (_name, tail) => {
    const { profile, params } = seatbeltInvocation(hostilePolicy(tail));
    const strings = readSbpl(profile).flatMap(stringsOf);
    for (const text of strings) expect(text.startsWith('/Users') || text.includes(tail), text).toBe(false);
    expect(Object.values(params)).toContain(`${base}/${tail}/secret/ok`);
  });

  it.each(hostile.refused.map((entry) => [entry.name, entry.tail, entry.because]))('hostile %s is refused as inline is', (_name, tail, because) => {
    const attempt = () => seatbeltInvocation(hostilePolicy(tail));
    expect(attempt).toThrow(DarwinProfileError);
    expect(attempt).toThrow(new RegExp(because));
  });

  it('one parameter per distinct value', () => {
    const { params } = seatbeltInvocation(workspacePolicy);
    expect(new Set(Object.values(params)).size).toBe(Object.keys(params).length);
  });
});

describe('defineArgs', () => {
  it('passes each value byte for byte after the first =', () => {
    expect(defineArgs({ P0: '/a b/"q"\\', P1: 'x=y=z' })).toEqual(['-D', 'P0=/a b/"q"\\', '-D', 'P1=x=y=z']);
  });
});
