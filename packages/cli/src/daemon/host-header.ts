import { isIP } from 'node:net';

/**
 * Whether a request's `Host` names this daemon the way a client on this machine or the network
 * does: an IP address, `localhost`, or a name the config lists (`server.allowedHosts`). A web page
 * whose own DNS name was made to resolve to 127.0.0.1 (DNS rebinding) reaches the daemon under
 * that name; its requests are refused before anything else is read, so such a page cannot even
 * tell the daemon is there (found by an attack: it read /healthz and the console's page). A
 * request without `Host` (HTTP/1.0, no browser sends one) is not a browser's and is taken.
 */
export function hostAllowed(host: string | undefined, allowedHosts: readonly string[]): boolean {
  if (host === undefined) return true;
  const name = hostnameOf(host).toLowerCase();
  if (name === 'localhost' || isIP(name) !== 0) return true;
  return allowedHosts.some((allowed) => allowed.toLowerCase() === name);
}

/** The name part of a Host header: `[::1]:8787` gives `::1`, `localhost:8787` gives `localhost`. */
function hostnameOf(host: string): string {
  if (host.startsWith('[')) {
    const end = host.indexOf(']');
    return end < 0 ? host : host.slice(1, end);
  }
  const colon = host.lastIndexOf(':');
  return colon < 0 ? host : host.slice(0, colon);
}
