import type { PathRule, SandboxPolicy } from '@aalis/api-reach';
import { darwinPath, darwinPatternPrefix } from '../src/darwin-path.js';
import type { SeatbeltHost } from '../src/seatbelt-profile.js';
import { translatePattern } from '../src/sbpl-regex.js';
import { filtersOf, heads, readSbpl, type SbplNode } from './sbpl-reader.js';

// Checks a produced profile against the policy it came from, reading the text back with the
// strict reader: every rule of the policy is there, with its own path, in the layer order.

type Expected = { action: 'allow' | 'deny'; first: { kind: string; value: string } | null; excepts: { kind: string; value: string }[] };

function firstOf(matcher: { path: string } | { pattern: string }, where: string): { kind: string; value: string } {
  if ('path' in matcher) return { kind: 'subpath', value: darwinPath(matcher.path, where) };
  // A pattern that is only ^, literal characters and $ names one path: expect a literal.
  const exact = /^\^\/((?:[^\\^$.|?*+()[\]{}]|\\[./-])*)\$$/.exec(matcher.pattern);
  if (exact !== null) return { kind: 'literal', value: darwinPath(`/${exact[1]!.replace(/\\(.)/g, '$1')}`, where) };
  return { kind: 'regex', value: translatePattern(darwinPatternPrefix(matcher.pattern), where) };
}

function fromRules(action: Expected['action'], rules: readonly PathRule[], field: string): Expected[] {
  return rules.map((rule, index) => ({
    action,
    first: firstOf(rule, `${field}[${index}]`),
    excepts: (rule.except ?? []).map((matcher, j) => firstOf(matcher, `${field}[${index}].except[${j}]`)),
  }));
}

function fromRoots(action: Expected['action'], roots: readonly string[], field: string): Expected[] {
  return roots.map((root, index) => ({ action, first: { kind: 'subpath', value: darwinPath(root, `${field}[${index}]`) }, excepts: [] }));
}

// Written here, not imported: the per-user folders are granted where ~/Library/Caches is, or the
// sandbox's own cache home in it (api-reach's toolchain caches since 2026-12-05).
const grantsCaches = (policy: SandboxPolicy) => policy.write.some((root) => /\/library\/caches(\/aalis-sandbox)?$/.test(root.toLowerCase()));

/** The file rules a profile must have for `policy`, per operation, in order (baseline entries have `first: null`). */
export function expectedFileRules(policy: SandboxPolicy, host: SeatbeltHost = {}): Record<'file-read*' | 'file-write*' | 'file-write-unlink', Expected[]> {
  const baseline = (action: Expected['action']): Expected => ({ action, first: null, excepts: [] });
  const userDirs = host.userDirs !== undefined && grantsCaches(policy) ? [host.userDirs.temp, host.userDirs.cache] : [];
  return {
    'file-read*': [
      baseline('allow'),
      baseline('deny'),
      baseline('allow'),
      ...fromRules('deny', policy.readDeny, 'readDeny'),
      ...fromRoots('allow', policy.readAllowWithin, 'readAllowWithin'),
    ],
    'file-write-unlink': [...fromRules('deny', policy.readDeny, 'readDeny'), ...(policy.readDeny.length > 0 ? [baseline('deny')] : []), ...(policy.write.length + userDirs.length > 0 ? [baseline('deny')] : [])],
    'file-write*': [
      baseline('deny'),
      baseline('allow'),
      ...fromRoots('allow', policy.write, 'write'),
      ...fromRoots('allow', userDirs, 'userDirs'),
      ...fromRules('deny', policy.writeDeny, 'writeDeny'),
      ...fromRules('allow', policy.writeExceptions, 'writeExceptions'),
      ...fromRules('deny', policy.controlDeny, 'controlDeny'),
    ],
  };
}

function containsNot(node: SbplNode, wanted: { kind: string; value: string }): boolean {
  if (node.type !== 'list') return false;
  const [head, inner] = node.items;
  if (head?.type === 'symbol' && head.value === 'require-not' && inner !== undefined) {
    return filtersOf(inner).some((filter) => filter.kind === wanted.kind && filter.value === wanted.value);
  }
  return node.items.some((item) => containsNot(item, wanted));
}

/** Reads `profile` and throws a descriptive Error at the first way it does not enforce `policy`. */
export function checkProfile(policy: SandboxPolicy, profile: string, host: SeatbeltHost = {}): SbplNode[] {
  const forms = readSbpl(profile);
  const problems: string[] = [];
  const version = forms[0];
  if (version === undefined || heads(version).join(' ') !== 'version 1') problems.push('does not open with (version 1)');
  for (const form of forms) {
    const head = heads(form)[0];
    if (head !== 'version' && head !== 'allow' && head !== 'deny') problems.push(`has a top-level form (${head ?? '?'} ...)`);
    if (heads(form).join(' ') === 'allow default') problems.push('has (allow default)');
  }
  if (forms.filter((form) => heads(form).join(' ') === 'deny default').length !== 1) problems.push('does not have exactly one (deny default)');

  const expected = expectedFileRules(policy, host);
  for (const operation of ['file-read*', 'file-write*', 'file-write-unlink'] as const) {
    const actual = forms.filter((form) => heads(form).slice(1).includes(operation));
    const wanted = expected[operation];
    if (actual.length !== wanted.length) problems.push(`has ${actual.length} ${operation} rules, the policy makes ${wanted.length}`);
    wanted.forEach((rule, index) => {
      const form = actual[index];
      if (form === undefined) return;
      const action = heads(form)[0];
      if (action !== rule.action) problems.push(`${operation} rule ${index} is ${action}, expected ${rule.action}`);
      if (operation === 'file-write*' && index !== 1 && !['file-link', 'file-clone'].every((op) => heads(form).includes(op))) problems.push(`${operation} rule ${index} leaves out links or clones`);
      if (rule.first === null) return;
      const first = filtersOf(form)[0];
      if (first?.kind !== rule.first.kind || first.value !== rule.first.value) {
        problems.push(`${operation} rule ${index} starts with ${JSON.stringify(first)}, expected ${JSON.stringify(rule.first)}`);
      }
      for (const except of rule.excepts) {
        if (!containsNot(form, except)) problems.push(`${operation} rule ${index} lacks the carve-out ${JSON.stringify(except)}`);
      }
    });
  }

  // The carry-out of read denies comes after every write rule, so no write exception re-allows it.
  const lastWrite = forms.findLastIndex((form) => heads(form).includes('file-write*'));
  const firstCarry = forms.findIndex((form) => heads(form).includes('file-write-unlink'));
  if (firstCarry >= 0 && firstCarry < lastWrite) problems.push('has a read-deny carry-out rule before a write rule');

  const network = forms.filter((form) => heads(form).slice(1).some((op) => op.startsWith('network')));
  const ipAllow = network.findIndex((form) => heads(form)[0] === 'allow' && filtersOf(form).length === 0 && JSON.stringify(form).includes('"ip"'));
  if (policy.network === 'off' && ipAllow >= 0) problems.push('allows IP with network off');
  if (policy.network === 'on') {
    if (ipAllow < 0) problems.push('does not allow IP with network on');
    for (const port of policy.localPorts) {
      for (const [op, kind] of [['network-outbound', 'remote ip'], ['network-bind', 'local ip']] as const) {
        const deny = network.findIndex((form) => heads(form).join(' ') === `deny ${op}` && filtersOf(form).some((f) => f.kind === kind && f.value === `*:${port}`));
        if (deny < 0 || deny < ipAllow) problems.push(`does not deny ${op} to *:${port} after the IP allow`);
      }
    }
  }
  const socketAllows = network
    .filter((form) => heads(form).join(' ') === 'allow network-outbound')
    .flatMap((form) => filtersOf(form))
    .filter((filter) => filter.kind === 'subpath' || filter.kind === 'literal');
  const allowedDirs = new Set(policy.unixSockets.map((dir, index) => darwinPath(dir, `unixSockets[${index}]`)));
  for (const dir of allowedDirs) if (!socketAllows.some((f) => f.kind === 'subpath' && f.value === dir)) problems.push(`does not allow unix sockets under ${dir}`);
  for (const filter of socketAllows) {
    const dns = policy.network === 'on' && filter.kind === 'literal' && filter.value === '/private/var/run/mDNSResponder';
    if (!dns && !(filter.kind === 'subpath' && allowedDirs.has(filter.value))) problems.push(`allows unix sockets at ${filter.value}, outside unixSockets`);
  }
  if (problems.length > 0) throw new Error(`the profile does not enforce the policy:\n- ${problems.join('\n- ')}`);
  return forms;
}
