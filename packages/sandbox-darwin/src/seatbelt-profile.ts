import type { PathRule, SandboxPolicy } from '@aalis/api-reach';
import { BASE_WRITABLE_DEVICES, OTHER_TERMINALS_REGEX, OWN_DESCRIPTORS_REGEX, PTY_EXTENSION, PTY_MASTER } from './profile-baseline.js';
import { layerHeading, PROFILE_LAYERS, type ProfileLayer } from './profile-layers.js';
import { networkLines } from './profile-network.js';
import { inlineQuote, ProfileParams, type SbplQuote } from './profile-params.js';
import { systemLines } from './profile-system.js';
import { carryLines } from './read-carry.js';
import { parseSandboxPolicy } from './sandbox-policy-schema.js';
import { pathFilter, renderFilter, ruleFilter } from './sbpl-filter.js';
import { sbplString } from './sbpl-string.js';
import { checkUserDirs, type DarwinUserDirs, grantsUserCaches } from './user-dirs.js';

/** The first line of every profile this package writes. */
export const PROFILE_PREAMBLE = ';; @aalis/sandbox-darwin: a SandboxPolicy as a Seatbelt profile; the last matching rule wins';

/** What a profile needs to know about the Mac beyond the policy. */
export interface SeatbeltHost {
  /** This user's temp and cache folders (`getconf DARWIN_USER_TEMP_DIR` / `DARWIN_USER_CACHE_DIR`); granted where the policy grants caches. */
  readonly userDirs?: DarwinUserDirs;
}

function layer(id: ProfileLayer['id']): ProfileLayer {
  return PROFILE_LAYERS.find((entry) => entry.id === id)!;
}

function fileLayers(policy: SandboxPolicy, userDirs: DarwinUserDirs | undefined, quote: SbplQuote): string[] {
  const filtersOf = (field: string, rules: readonly PathRule[]): string[] =>
    rules.map((rule, index) => {
      const where = `${field}[${index}]`;
      return renderFilter(ruleFilter(rule, where), where, quote);
    });
  const ruleLines = (entry: ProfileLayer, rules: readonly PathRule[], filters = filtersOf(entry.field ?? '', rules)): string[] =>
    filters.map((filter) => `(${entry.action} ${entry.operation} ${filter})`);
  const readDenied = filtersOf('readDeny', policy.readDeny);
  const rootLines = (entry: ProfileLayer, roots: readonly string[], field: string = entry.field ?? ''): string[] =>
    roots.map((root, index) => {
      const where = `${field}[${index}]`;
      return `(${entry.action} ${entry.operation} ${renderFilter(pathFilter(root, 'subtree', where), where, quote)})`;
    });
  const lines: string[] = [];
  const open = (id: ProfileLayer['id']): ProfileLayer => {
    const entry = layer(id);
    lines.push('', layerHeading(entry));
    return entry;
  };
  const q = (text: string) => sbplString(text, 'baseline');
  // Terminals: only a pty this sandbox opened itself (it carries the pty extension) is usable.
  const ownPty = `(literal ${q(PTY_MASTER)}) (require-all (regex ${q(OTHER_TERMINALS_REGEX)}) (extension ${q(PTY_EXTENSION)}))`;
  open('read.default');
  lines.push('(allow file-read*)', `(deny file-read* (regex ${q(OTHER_TERMINALS_REGEX)}))`, `(allow file-read* ${ownPty})`);
  lines.push(...ruleLines(open('read.readDeny'), policy.readDeny, readDenied));
  lines.push(...rootLines(open('read.readAllowWithin'), policy.readAllowWithin));
  const writeDefault = open('write.default');
  const devices = BASE_WRITABLE_DEVICES.map((device) => `(literal ${q(device)})`).join(' ');
  lines.push(`(deny ${writeDefault.operation})`, `(allow file-write* file-ioctl ${devices} (regex ${q(OWN_DESCRIPTORS_REGEX)}) ${ownPty})`);
  const write = open('write.write');
  lines.push(...rootLines(write, policy.write));
  const granted = userDirs !== undefined && grantsUserCaches(policy.write) ? [userDirs.temp, userDirs.cache] : [];
  lines.push(...rootLines(write, granted, 'userDirs'));
  lines.push(...ruleLines(open('write.writeDeny'), policy.writeDeny));
  lines.push(...ruleLines(open('write.writeExceptions'), policy.writeExceptions));
  lines.push(...ruleLines(open('write.controlDeny'), policy.controlDeny));
  open('readDeny.carry');
  lines.push(...carryLines(policy.readDeny, readDenied, policy.readAllowWithin, quote));
  const roots = [...policy.write.map((root, index) => [root, `write[${index}]`] as const), ...granted.map((dir, index) => [dir, `userDirs[${index}]`] as const)];
  const rootsLayer = open('write.roots');
  if (roots.length > 0) {
    // Inside a root, yes; the root itself stays where the policy (and every other app, for T and C) expects it.
    lines.push(`(${rootsLayer.action} ${rootsLayer.operation} ${roots.map(([root, where]) => renderFilter(pathFilter(root, 'exact', where), where, quote)).join(' ')})`);
  }
  const setugid = open('write.setugid');
  lines.push(`(${setugid.action} ${setugid.operation})`);
  return lines;
}

/**
 * The Seatbelt profile (SBPL text for `sandbox-exec -p`) that enforces `policy` on this Mac.
 * Pure. Throws {@link DarwinProfileError} when any part of the policy or host cannot be
 * expressed exactly: a relative or non-normalised path, a control character, a pattern outside
 * the dialect, user folders that are not per-user folders. Nothing is dropped.
 */
export function seatbeltProfile(policy: SandboxPolicy, host: SeatbeltHost = {}): string {
  return buildProfile(policy, host, inlineQuote);
}

/** A profile whose policy strings travel as `sandbox-exec -D` parameters; see {@link seatbeltInvocation}. */
export interface SeatbeltInvocation {
  /** The profile text: fixed words and `(param "Pn")` references, no path of the policy. */
  readonly profile: string;
  /** The parameters, `Pn` to its value, for `-D Pn=value`. */
  readonly params: Readonly<Record<string, string>>;
}

/**
 * The profile {@link seatbeltProfile} writes, with every string of the policy and host passed as
 * a parameter instead of escaped into the text, for running: no path is ever read as SBPL, and
 * each reaches the kernel byte for byte. Substituting the parameters back (escaped) gives exactly
 * {@link seatbeltProfile}'s text. Same refusals, same errors.
 */
export function seatbeltInvocation(policy: SandboxPolicy, host: SeatbeltHost = {}): SeatbeltInvocation {
  const params = new ProfileParams();
  const profile = buildProfile(policy, host, params.quote);
  return { profile, params: params.values() };
}

function buildProfile(policy: SandboxPolicy, host: SeatbeltHost, quote: SbplQuote): string {
  const checked = parseSandboxPolicy(policy);
  const userDirs = host.userDirs === undefined ? undefined : checkUserDirs(host.userDirs);
  const lines = ['(version 1)', PROFILE_PREAMBLE, '(deny default)', '', ...systemLines(), ...fileLayers(checked, userDirs, quote), ...networkLines(checked, quote)];
  return `${lines.join('\n')}\n`;
}
