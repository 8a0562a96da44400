/** The access tiers, lowest to highest. */
export const ACCESS_TIERS = ['readonly', 'confirm', 'workspace', 'full'] as const;
/** One of {@link ACCESS_TIERS}. */
export type AccessTier = (typeof ACCESS_TIERS)[number];

/** What an out-of-range ask becomes in the readonly and workspace tiers: asked, or denied outright. */
export const BOUNDARY_POLICIES = ['ask', 'deny'] as const;
/** One of {@link BOUNDARY_POLICIES}. */
export type BoundaryPolicy = (typeof BOUNDARY_POLICIES)[number];

/** Who a call acts for, as the authority service's `principalOf` says: only `owner` has local effect. */
export const REACH_PRINCIPALS = ['owner', 'other'] as const;
/** One of {@link REACH_PRINCIPALS}. */
export type ReachPrincipal = (typeof REACH_PRINCIPALS)[number];

/** Where a tier runs commands: in the sandbox (readonly, workspace) or on the host (confirm, full). */
export function execOfTier(tier: AccessTier): 'sandbox' | 'host' {
  return tier === 'confirm' || tier === 'full' ? 'host' : 'sandbox';
}
