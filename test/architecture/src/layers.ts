/**
 * The import direction of docs/architecture.md as layers: a package may import packages of its own layer
 * or to its left (lower numbers), never one to its right.
 */
export const LAYERS: Readonly<Record<string, number>> = {
  core: 0,
  'api-reach': 1,
  model: 1,
  'plugin-reach': 2,
  'plugin-approval': 2,
  'plugin-tools': 2,
  'sandbox-linux': 2,
  'sandbox-darwin': 2,
  'sandbox-docker': 2,
  'plugin-spec-tools': 2,
  'plugin-agent': 3,
  'plugin-pod': 3,
  cli: 4,
  'create-aalis': 4,
};

/** The workspace scope every package name starts with. */
export const SCOPE = '@aalis/';

/** The sandbox backends: packages that turn a policy into a confined process on one platform. */
export const BACKENDS: ReadonlySet<string> = new Set(['sandbox-linux', 'sandbox-darwin', 'sandbox-docker']);

/**
 * The only packages whose shipped code may import a backend, and which. Everyone else reaches a
 * backend through the kernel's `sandbox` service, so a plugin cannot quietly run code under a
 * backend the deployment did not choose.
 */
export const BACKEND_USERS: Readonly<Record<string, readonly string[]>> = {
  // The composition root: it picks the deployment's backend, provides it as `sandbox`, and previews its plan.
  cli: ['sandbox-linux', 'sandbox-darwin', 'sandbox-docker'],
  // Spec tools run in hardened Docker containers by design (their envelope and profiles are Docker's).
  'plugin-spec-tools': ['sandbox-docker'],
};
