import { ACCESS_TIERS, type AccessTier, AccessTierSchema, AXIS_ALIASES, BOUNDARY_POLICIES, type BoundaryPolicy } from '@aalis/core';
import { UsageError } from './io.js';

/** Every spelling `--tier` accepts: the canonical tiers and their other names (docs/reach-contract.md). */
export const TIER_CHOICES: readonly string[] = [...ACCESS_TIERS, ...Object.keys(AXIS_ALIASES.tier)];
/** The backends `--backend` accepts. */
export const BACKEND_CHOICES = ['auto', 'linux', 'darwin', 'docker'] as const;
/** One of {@link BACKEND_CHOICES}. */
export type BackendChoice = (typeof BACKEND_CHOICES)[number];

/** The canonical tier of a `--tier` value. */
export function tierOf(value: unknown, command: string): AccessTier {
  if (value === undefined) return 'workspace';
  const parsed = AccessTierSchema.safeParse(value);
  if (!parsed.success) throw new UsageError(`--tier '${String(value)}' is not accepted; use one of: ${TIER_CHOICES.join(', ')}.`, command);
  return parsed.data;
}

/** The boundary policy of a `--boundary` value. */
export function boundaryOf(value: unknown): BoundaryPolicy {
  return value === undefined ? 'ask' : (value as BoundaryPolicy);
}

export { BOUNDARY_POLICIES };

/** The backend `auto` stands for on this platform. */
export function resolveBackend(choice: BackendChoice, platform: NodeJS.Platform = process.platform): 'linux' | 'darwin' | 'docker' {
  if (choice !== 'auto') return choice;
  return platform === 'darwin' ? 'darwin' : 'linux';
}
