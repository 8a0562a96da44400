import type { execa as Execa } from 'execa';

/**
 * execa, loaded at its first call rather than with this package. A one-shot `aalis exec` whose
 * probe comes from its cache and whose run starts through the launcher never calls it, and
 * evaluating its modules (about a hundred) cost about 20 ms of every run. A daemon pays it once.
 */
export async function loadExeca(): Promise<typeof Execa> {
  return (await import('execa')).execa;
}
