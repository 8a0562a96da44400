import type { SandboxPolicy } from '@aalis/api-reach';
import { darwinPath } from './darwin-path.js';
import { DNS_SOCKET, NETWORK_MACH_SERVICES } from './profile-baseline.js';
import type { SbplQuote } from './profile-params.js';
import { sbplString } from './sbpl-string.js';

/**
 * The network part of a profile. Unix sockets only under `unixSockets`. Network off: no IP at
 * all, not even loopback (a Mac has no per-command loopback to give). Network on: outbound IP,
 * listening (test suites bind 127.0.0.1:0 or ::), then each of `localPorts` denied on every host
 * (`*:PORT`: `localhost:PORT` misses ::ffff:127.0.0.1 and the Mac's own addresses), for
 * connecting and for binding (a command must not stand in for the daemon on its port).
 */
export function networkLines(policy: SandboxPolicy, quote: SbplQuote): string[] {
  const lines = ['', ';; unix sockets: only under unixSockets', '(allow system-socket (socket-domain AF_UNIX))'];
  policy.unixSockets.forEach((dir, index) => {
    // Exact spelling only (no case-folded regex): erring narrow on an allow costs a connection, not isolation.
    const where = `unixSockets[${index}]`;
    const quoted = quote(darwinPath(dir, where), where);
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
    ';; network on: outbound IP and listening, minus localPorts on every host',
    '(allow network-outbound (remote ip))',
    `(allow network-bind network-inbound (local ip ${sbplString('*:*', 'baseline')}))`,
    `(allow network-outbound (remote unix-socket (literal ${sbplString(DNS_SOCKET, 'baseline')})))`,
    `(allow mach-lookup ${services})`,
  );
  for (const port of [...new Set(policy.localPorts)].sort((a, b) => a - b)) {
    const any = sbplString(`*:${port}`, 'localPorts');
    lines.push(`(deny network-outbound (remote ip ${any}))`, `(deny network-bind (local ip ${any}))`);
  }
  return lines;
}
