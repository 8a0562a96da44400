import { readFileSync, writeFileSync } from 'node:fs';
import { protectedLists, type SandboxPolicy } from '@aalis/api-reach';
import { describe, expect, it } from 'vitest';
import hostile from '../test/fixtures/hostile-paths.json' with { type: 'json' };
import { readonlyPolicy, USER_DIRS, workspacePolicy } from '../test/policies.js';
import { checkProfile } from '../test/profile-structure.js';
import { heads, stringsOf } from '../test/sbpl-reader.js';
import { DarwinProfileError } from './darwin-profile-error.js';
import { seatbeltProfile } from './seatbelt-profile.js';

const golden = (name: string) => new URL(`../test/golden/${name}.sb`, import.meta.url);

describe('seatbeltProfile golden files', () => {
  // Reviewed by eye once and committed; UPDATE_GOLDEN=1 rewrites them after an intended change.
  it.each([
    ['readonly', readonlyPolicy],
    ['workspace', workspacePolicy],
  ] as const)('the %s policy gives the committed profile', (name, policy) => {
    const profile = seatbeltProfile(policy, { userDirs: USER_DIRS });
    if (process.env.UPDATE_GOLDEN === '1') writeFileSync(golden(name), profile);
    expect(profile).toBe(readFileSync(golden(name), 'utf8'));
  });
});

describe('seatbeltProfile structure', () => {
  it.each([
    ['readonly', readonlyPolicy],
    ['workspace', workspacePolicy],
  ] as const)('the %s profile has every rule of its policy, in layer order', (_name, policy) => {
    expect(() => checkProfile(policy, seatbeltProfile(policy))).not.toThrow();
    expect(() => checkProfile(policy, seatbeltProfile(policy, { userDirs: USER_DIRS }), { userDirs: USER_DIRS })).not.toThrow();
  });

  it("translates every rule of api-reach's own darwin lists", () => {
    const data = '/Users/ana/.aalis';
    const lists = protectedLists({
      paths: {
        install: '/Users/ana/aalis',
        data,
        workspace: `${data}/workspace`,
        tmp: `${data}/tmp`,
        self: `${data}/self`,
        logs: `${data}/logs`,
        config: `${data}/config.yaml`,
        secrets: `${data}/secrets.yaml`,
        deployment: '/Users/ana',
      },
      userHome: '/Users/ana',
      platform: 'darwin',
      form: 'source',
      codeDirs: ['/Users/ana/plugins/extra'],
      entry: '/Users/ana/aalis/bin/aalis.cjs',
    });
    const policy: SandboxPolicy = { ...workspacePolicy, readDeny: lists.denyRead, writeDeny: lists.landing, controlDeny: lists.control };
    expect(lists.landing.length + lists.denyRead.length + lists.control.length).toBeGreaterThan(40);
    expect(() => checkProfile(policy, seatbeltProfile(policy))).not.toThrow();
  });

  it('the checker itself notices a profile that does not enforce the policy', () => {
    const profile = seatbeltProfile(workspacePolicy);
    const lines = profile.split('\n');
    const controlAt = lines.indexOf(';; layer write.controlDeny');
    const swapped = [...lines];
    swapped.splice(controlAt, 2);
    swapped.splice(lines.indexOf(';; layer write.write'), 0, lines[controlAt + 1]!);
    const tampered = {
      'a layer moved before an earlier one': swapped.join('\n'),
      'a rule dropped': lines.filter((line) => !line.includes('.ssh')).join('\n'),
      'an injected allow default': `${profile}(allow default)\n`,
      'an unbalanced paren': `${profile}(`,
      'a raw newline in a string': profile.replace('"/Users/ana/src/app"', '"/Users/ana/src\n/app"'),
      'the port deny removed': lines.filter((line) => !line.includes('(remote ip "*:4681")')).join('\n'),
      'the port bind deny removed': lines.filter((line) => !line.includes('(local ip "*:4681")')).join('\n'),
      'links left out of a write root': profile.replace('(allow file-write* file-link file-clone (require-any (subpath "/Users/ana/src/app")', '(allow file-write* (require-any (subpath "/Users/ana/src/app")'),
      'the carry-out before the write layers': (() => {
        const carry = lines.findIndex((line) => line.startsWith('(deny file-write-unlink'));
        const moved = [...lines];
        const [rule] = moved.splice(carry, 1);
        moved.splice(lines.indexOf(';; layer write.write'), 0, rule!);
        return moved.join('\n');
      })(),
      'a carry-out rule dropped': lines.filter((line) => !(line.startsWith('(deny file-write-unlink') && line.includes('.ssh'))).join('\n'),
      'a socket directory widened': profile.replace('(remote unix-socket (subpath "/Users/ana/src/app"))', '(remote unix-socket (subpath "/Users"))'),
    };
    for (const [what, text] of Object.entries(tampered)) {
      expect(() => checkProfile(workspacePolicy, text), what).toThrow();
    }
  });

  it('writes the network layer the policy asks for', () => {
    const off = seatbeltProfile(readonlyPolicy);
    expect(off).toContain('(deny network-outbound (remote ip))');
    expect(off).not.toContain('(allow network-outbound (remote ip))');
    const on = seatbeltProfile({ ...readonlyPolicy, network: 'on', localPorts: [8080, 22, 8080] });
    expect(on.match(/\(deny network-outbound \(remote ip "\*:(\d+)"\)\)/g)).toEqual([
      '(deny network-outbound (remote ip "*:22"))',
      '(deny network-outbound (remote ip "*:8080"))',
    ]);
    expect(on.indexOf('(allow network-outbound (remote ip))')).toBeLessThan(on.indexOf('"*:22"'));
  });

  it('carves exceptions out of the rule instead of allowing them again', () => {
    const profile = seatbeltProfile({ ...readonlyPolicy, writeDeny: [], controlDeny: [{ path: '/Users/ana/.aalis', except: [{ path: '/Users/ana/.aalis/workspace' }] }] });
    const line = profile.split('\n').find((l) => l.startsWith('(deny file-write* file-link file-clone (require-all'));
    expect(line).toContain('(require-not (require-any (subpath "/Users/ana/.aalis/workspace")');
    expect(profile).not.toContain('(allow file-write* file-link file-clone (require-any (subpath "/Users/ana/.aalis/workspace")');
  });

  it('spells /tmp, /var and /etc the way the kernel reports them', () => {
    const profile = seatbeltProfile({ ...readonlyPolicy, write: ['/tmp/a', '/var/folders/x/T'], readAllowWithin: ['/etc/x'], unixSockets: ['/tmp/s'] });
    expect(profile).toContain('(subpath "/private/tmp/a")');
    expect(profile).toContain('(subpath "/private/var/folders/x/T")');
    expect(profile).toContain('(subpath "/private/etc/x")');
    expect(profile).toContain('(remote unix-socket (subpath "/private/tmp/s"))');
    expect(profile).not.toMatch(/"\/(tmp|var|etc)\//);
  });

  it('is deterministic', () => {
    expect(seatbeltProfile(workspacePolicy)).toBe(seatbeltProfile(structuredClone(workspacePolicy)));
  });
});

describe('hostile paths', () => {
  const base = '/Users/ana/src/app';
  const policyFor = (tail: string): SandboxPolicy => ({
    ...readonlyPolicy,
    readDeny: [{ path: `${base}/${tail}/secret`, except: [{ path: `${base}/${tail}/secret/ok` }] }],
    readAllowWithin: [`${base}/${tail}/tmp`],
    write: [`${base}/${tail}`],
    writeDeny: [{ path: `${base}/${tail}/.git` }],
    writeExceptions: [{ path: `${base}/${tail}/.git/info` }],
    controlDeny: [{ path: `${base}/${tail}/control` }],
    network: 'on',
    unixSockets: [`${base}/${tail}`],
  });
  const benign = readSbplForms(policyFor('plain'));

  function readSbplForms(policy: SandboxPolicy) {
    return checkProfile(policy, seatbeltProfile(policy));
  }

  it.each(hostile.accepted.map((entry) => [entry.name, entry.tail]))('%s stays inside its strings', (_name, tail) => {
    const policy = policyFor(tail);
    const forms = readSbplForms(policy);
    expect(forms.map(heads)).toEqual(benign.map(heads));
    const strings = forms.flatMap(stringsOf);
    for (const path of [`${base}/${tail}`, `${base}/${tail}/.git`, `${base}/${tail}/secret/ok`, `${base}/${tail}/control`]) {
      expect(strings).toContain(path);
    }
  });

  it.each(hostile.refused.map((entry) => [entry.name, entry.tail, entry.because]))('%s is refused, nothing is built', (_name, tail, because) => {
    const attempt = () => seatbeltProfile(policyFor(tail));
    expect(attempt).toThrow(DarwinProfileError);
    expect(attempt).toThrow(new RegExp(because));
  });

  it.each([
    ['readDeny', { readDeny: [{ pattern: '(?=x)' }] }, /readDeny\[0\]/],
    ['an except', { writeDeny: [{ path: '/a', except: [{ path: 'rel' }] }] }, /writeDeny\[0\]\.except\[0\]/],
    ['a port', { localPorts: [70000] }, /policy\.localPorts\[0\]/],
    ['the network', { network: 'maybe' }, /policy\.network/],
    ['an unknown key', { writeDeny: [{ path: '/a', glob: '*' }] }, /policy\.writeDeny\[0\]/],
  ])('names the rule when %s is wrong', (_what, patch, where) => {
    expect(() => seatbeltProfile({ ...readonlyPolicy, ...patch } as SandboxPolicy)).toThrow(where);
  });
});
