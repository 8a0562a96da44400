import { ACCESS_TIERS, type AccessTier, BOUNDARY_POLICIES, type BoundaryPolicy, execPlaceOf, type Principal } from '@aalis/core';

// The tiers and boundary policies are the session settings' axes, owned by the kernel; the
// reach contract names them too, so they are re-exported here rather than defined twice.
export { ACCESS_TIERS, type AccessTier, BOUNDARY_POLICIES, type BoundaryPolicy };

/** Who a call acts for, as the authority service's `principalOf` says: only `owner` has local effect. */
export const REACH_PRINCIPALS = ['owner', 'other'] as const satisfies readonly Principal[];
/** One of {@link REACH_PRINCIPALS}. */
export type ReachPrincipal = Principal;

/** Where a tier runs commands: in the sandbox (readonly, workspace) or on the host (confirm, full). */
export const execOfTier: (tier: AccessTier) => 'sandbox' | 'host' = execPlaceOf;
