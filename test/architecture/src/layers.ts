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
