import type { PathRule, SandboxPolicy } from '@aalis/api-reach';
import {
  BASE_MACH_SERVICES,
  BASE_WRITABLE_DEVICES,
  BASELINE_RULES,
  DNS_SOCKET,
  NETWORK_MACH_SERVICES,
  OTHER_TERMINALS_REGEX,
  OWN_DESCRIPTORS_REGEX,
} from './profile-baseline.js';
import { layerHeading, PROFILE_LAYERS, type ProfileLayer } from './profile-layers.js';
import { parseSandboxPolicy } from './sandbox-policy-schema.js';
import { darwinPath } from './darwin-path.js';
import { pathFilter, renderFilter, ruleFilter } from './sbpl-filter.js';
import { sbplString } from './sbpl-string.js';

/** The first line of every profile this package writes. */
export const PROFILE_PREAMBLE = ';; @aalis/sandbox-darwin: a SandboxPolicy as a Seatbelt profile; the last matching rule wins';

function layer(id: ProfileLayer['id']): ProfileLayer {
  return PROFILE_LAYERS.find((entry) => entry.id === id)!;
}

function ruleLines(entry: ProfileLayer, rules: readonly PathRule[]): string[] {
  return rules.map((rule, index) => {
    const where = `${entry.field}[${index}]`;
    return `(${entry.action} ${entry.operation} ${renderFilter(ruleFilter(rule, where), where)})`;
  });
}

function rootLines(entry: ProfileLayer, roots: readonly string[]): string[] {
  return roots.map((root, index) => {
    const where = `${entry.field}[${index}]`;
    return `(${entry.action} ${entry.operation} ${renderFilter(pathFilter(root, 'subtree', where), where)})`;
  });
}

function fileLayers(policy: SandboxPolicy): string[] {
  const lines: string[] = [];
  const open = (id: ProfileLayer['id']): ProfileLayer => {
    const entry = layer(id);
    lines.push('', layerHeading(entry));
    return entry;
  };
  open('read.default');
  lines.push('(allow file-read*)', `(deny file-read* (regex ${sbplString(OTHER_TERMINALS_REGEX, 'baseline')}))`);
  lines.push(...ruleLines(open('read.readDeny'), policy.readDeny));
  lines.push(...rootLines(open('read.readAllowWithin'), policy.readAllowWithin));
  open('write.default');
  const devices = BASE_WRITABLE_DEVICES.map((device) => `(literal ${sbplString(device, 'baseline')})`).join(' ');
  lines.push('(deny file-write*)', `(allow file-write* file-ioctl ${devices} (regex ${sbplString(OWN_DESCRIPTORS_REGEX, 'baseline')}))`);
  lines.push(...rootLines(open('write.write'), policy.write));
  lines.push(...ruleLines(open('write.writeDeny'), policy.writeDeny));
  lines.push(...ruleLines(open('write.writeExceptions'), policy.writeExceptions));
  lines.push(...ruleLines(open('write.controlDeny'), policy.controlDeny));
  return lines;
}

function networkLines(policy: SandboxPolicy): string[] {
  const lines = ['', ';; unix sockets: only under unixSockets', '(allow system-socket (socket-domain AF_UNIX))'];
  policy.unixSockets.forEach((dir, index) => {
    // Exact spelling only (no case-folded regex): erring narrow on an allow costs a connection, not isolation.
    const where = `unixSockets[${index}]`;
    const quoted = sbplString(darwinPath(dir, where), where);
    lines.push(`(allow network-outbound (remote unix-socket (subpath ${quoted})))`);
    lines.push(`(allow network-bind network-inbound (local unix-socket (subpath ${quoted})))`);
  });
  if (policy.network === 'off') {
    lines.push('', ';; network off: no IP at all', '(deny network-outbound (remote ip))');
    return lines;
  }
  const services = NETWORK_MACH_SERVICES.map((name) => `(global-name ${sbplString(name, 'baseline')})`).join(' ');
  lines.push(
    '',
    ';; network on: outbound IP, minus localPorts',
    '(allow network-outbound (remote ip))',
    `(allow network-outbound (remote unix-socket (literal ${sbplString(DNS_SOCKET, 'baseline')})))`,
    `(allow mach-lookup ${services})`,
  );
  for (const port of [...new Set(policy.localPorts)].sort((a, b) => a - b)) {
    lines.push(`(deny network-outbound (remote ip ${sbplString(`localhost:${port}`, 'localPorts')}))`);
  }
  return lines;
}

/**
 * The Seatbelt profile (SBPL text for `sandbox-exec -p`) that enforces `policy`. Pure. Throws
 * {@link DarwinProfileError} when any part of the policy cannot be expressed exactly: a relative
 * or non-normalised path, a control character, a pattern outside the dialect. Nothing is dropped.
 */
export function seatbeltProfile(policy: SandboxPolicy): string {
  const checked = parseSandboxPolicy(policy);
  const services = BASE_MACH_SERVICES.map((name) => `(global-name ${sbplString(name, 'baseline')})`).join(' ');
  const lines = [
    '(version 1)',
    PROFILE_PREAMBLE,
    '(deny default)',
    '',
    ';; baseline: processes, signals inside the sandbox, reads of system state',
    ...BASELINE_RULES,
    `(allow mach-lookup ${services})`,
    ...fileLayers(checked),
    ...networkLines(checked),
  ];
  return `${lines.join('\n')}\n`;
}
