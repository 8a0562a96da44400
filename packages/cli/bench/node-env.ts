/**
 * The environment the start-up benchmarks give the node processes they time: this one's, without
 * what changes how node itself starts. `NODE_OPTIONS` could preload anything; `NODE_EXTRA_CA_CERTS`
 * makes node read and parse a certificate bundle before any code runs (about 45 ms on these
 * machines, where the environment sets it), which is paid by `node -e 0` and by `aalis` alike and
 * so moves every ratio to `node -e 0` without saying anything about aalis.
 */
export function benchNodeEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) if (value !== undefined && name !== 'NODE_OPTIONS' && name !== 'NODE_EXTRA_CA_CERTS') env[name] = value;
  return { ...env, ...extra };
}
