import { z } from 'zod';

/** Access tiers, lowest to highest (the reach contract's names). */
export const ACCESS_TIERS = ['readonly', 'confirm', 'workspace', 'full'] as const;
/** One of {@link ACCESS_TIERS}. */
export type AccessTier = (typeof ACCESS_TIERS)[number];

/** What a boundary ask becomes: asked, or denied outright. */
export const BOUNDARY_POLICIES = ['ask', 'deny'] as const;
/** One of {@link BOUNDARY_POLICIES}. */
export type BoundaryPolicy = (typeof BOUNDARY_POLICIES)[number];

/** Who answers an ask: a person, an AI reviewer, or nobody (every ask is a deny). */
export const APPROVERS = ['human', 'reviewer', 'none'] as const;
/** One of {@link APPROVERS}. */
export type Approver = (typeof APPROVERS)[number];

/** The rhythm of a conversation: plan first, discuss first, or just do it. */
export const RUN_MODES = ['plan', 'ask', 'execute'] as const;
/** One of {@link RUN_MODES}. */
export type RunMode = (typeof RUN_MODES)[number];

/** Where commands run, fixed for the daemon's lifetime. */
export const DEPLOYMENTS = ['host', 'docker'] as const;
/** One of {@link DEPLOYMENTS}. */
export type Deployment = (typeof DEPLOYMENTS)[number];

/**
 * The other names the axes are known by (docs/reach-contract.md, "The axes of a conversation"), mapped onto the canonical names. The CLI and config
 * accept these wherever they accept a canonical value.
 */
export const AXIS_ALIASES = {
  tier: {
    'read-only': 'readonly',
    'workspace-write': 'workspace',
    'full-access': 'full',
    approval: 'confirm',
    unrestricted: 'full',
  },
  approver: { approval: 'human', auto_approval: 'reviewer', 'auto-approval': 'reviewer' },
} as const satisfies {
  tier: Record<string, AccessTier>;
  approver: Record<string, Approver>;
};

/** Accepts a canonical tier or one of its aliases. */
export const AccessTierSchema = z.preprocess(
  (value) => (typeof value === 'string' && value in AXIS_ALIASES.tier ? AXIS_ALIASES.tier[value as keyof typeof AXIS_ALIASES.tier] : value),
  z.enum(ACCESS_TIERS, {
    error: () => `expected one of ${ACCESS_TIERS.join(', ')} (or an alias: ${Object.keys(AXIS_ALIASES.tier).join(', ')})`,
  }),
);

/** Accepts a canonical approver or one of its aliases. */
export const ApproverSchema = z.preprocess(
  (value) => (typeof value === 'string' && value in AXIS_ALIASES.approver ? AXIS_ALIASES.approver[value as keyof typeof AXIS_ALIASES.approver] : value),
  z.enum(APPROVERS, {
    error: () => `expected one of ${APPROVERS.join(', ')} (or an alias: ${Object.keys(AXIS_ALIASES.approver).join(', ')})`,
  }),
);

/** What `plan` saved, to put back when the plan is approved. */
export const RestoreSchema = z.object({ tier: AccessTierSchema, boundary: z.enum(BOUNDARY_POLICIES) });

/** One conversation's settings on the four per-conversation axes. */
export const SessionSettingsSchema = z.object({
  tier: AccessTierSchema,
  boundary: z.enum(BOUNDARY_POLICIES),
  approver: ApproverSchema,
  runMode: z.enum(RUN_MODES),
  /** Set while in `plan`: the tier and boundary to restore when the plan is approved. */
  restore: RestoreSchema.optional(),
});
/** One conversation's settings. */
export type SessionSettings = z.infer<typeof SessionSettingsSchema>;

/** A change asked for by a person or a tool; absent fields stay as they are. */
export const SettingsChangeSchema = z
  .object({
    tier: AccessTierSchema,
    boundary: z.enum(BOUNDARY_POLICIES),
    approver: ApproverSchema,
    runMode: z.enum(RUN_MODES),
  })
  .partial()
  .strict();
/** A change to a conversation's settings. */
export type SettingsChange = z.infer<typeof SettingsChangeSchema>;

/** Settings a first conversation starts with (the reference implementation's: workspace, ask). */
export const DEFAULT_SETTINGS: SessionSettings = Object.freeze({
  tier: 'workspace',
  boundary: 'ask',
  approver: 'human',
  runMode: 'execute',
});

/** Whether commands under a tier run on the host (outside any sandbox) or in the sandbox. */
export function execPlaceOf(tier: AccessTier): 'sandbox' | 'host' {
  return tier === 'confirm' || tier === 'full' ? 'host' : 'sandbox';
}

/** The result of applying a change: the new settings, or why it was refused. */
export type SettingsResolution =
  | { readonly ok: true; readonly settings: SessionSettings }
  | { readonly ok: false; readonly rule: 'plan-locks-tier'; readonly message: string };

/**
 * The one place the cross-axis rules live. `plan` forces `readonly` (and so the sandbox) with
 * boundary `deny` (what would be asked is refused) and remembers what to restore; leaving `plan`
 * restores it; the tier cannot be raised in `plan`. A person may set the boundary back to `ask`
 * while planning (to allow the network, say), an explicit choice.
 */
export function resolveSettings(current: SessionSettings, change: SettingsChange): SettingsResolution {
  const next: SessionSettings = { ...current, ...change };
  const enteringPlan = current.runMode !== 'plan' && next.runMode === 'plan';
  const leavingPlan = current.runMode === 'plan' && next.runMode !== 'plan';

  if (enteringPlan) {
    // Plan changes nothing: readonly in the sandbox, and what readonly would ask (a write, a host
    // command) is refused instead. The one write plan makes is the plan document, by submit_plan.
    return {
      ok: true,
      settings: { ...next, tier: 'readonly', boundary: 'deny', restore: { tier: next.tier, boundary: next.boundary } },
    };
  }
  if (leavingPlan) {
    const { restore, ...rest } = next;
    const restored = restore ?? { tier: current.tier, boundary: current.boundary };
    return {
      ok: true,
      settings: { ...rest, tier: change.tier ?? restored.tier, boundary: change.boundary ?? restored.boundary },
    };
  }
  if (next.runMode === 'plan' && change.tier !== undefined && change.tier !== 'readonly') {
    return {
      ok: false,
      rule: 'plan-locks-tier',
      message: `the tier cannot be changed to '${change.tier}' while the conversation is in plan mode: plan runs read-only in the sandbox. Approve the plan or switch the run mode to 'ask' or 'execute' first.`,
    };
  }
  return { ok: true, settings: next };
}
