import type { RiskLevel } from '@aalis/core';
import { z } from 'zod';
import { EnvAllowEntrySchema } from './container-env.js';

/** The execution profiles of a tool's `sandbox` spec, from the least to the most special. */
export const SANDBOX_PROFILES = ['local', 'stdio', 'network', 'builder'] as const;
/** One of {@link SANDBOX_PROFILES}. */
export type SandboxProfileName = (typeof SANDBOX_PROFILES)[number];

/** Who a container runs as: the unprivileged sandbox user, or a host uid:gid. */
export type ContainerIdentity = { readonly kind: 'restricted' } | { readonly kind: 'host'; readonly uid: number; readonly gid: number };

/** The unprivileged user restricted tiers run as; the kernel refuses its writes to files it does not own. */
export const RESTRICTED_UID = 10001;

/** The longest a builder run may take (002: `timeout 180s` around the build). */
export const BUILDER_TIMEOUT_MS = 180_000;

const MEMORY = /^[1-9][0-9]*[kmg]$/;

function memoryBytes(value: string): number {
  const unit = { k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[value.slice(-1) as 'k' | 'm' | 'g'];
  return Number(value.slice(0, -1)) * unit;
}

/**
 * A tool's `sandbox:` block as written in its spec (002). Limits may be set per tool; the
 * baseline (read-only root, caps dropped, no new privileges) cannot be turned off.
 */
export const ToolSandboxSpecSchema = z
  .object({
    profile: z.enum(SANDBOX_PROFILES).default('local'),
    network: z.enum(['none', 'default']).optional(),
    memory: z
      .string()
      .regex(MEMORY, 'memory is a number with a unit k, m or g, e.g. 256m')
      .refine((v) => memoryBytes(v) >= 6 * 1024 ** 2 && memoryBytes(v) <= 16 * 1024 ** 3, 'memory must be between 6m and 16g')
      .optional(),
    cpus: z
      .string()
      .regex(/^[0-9]+(\.[0-9]+)?$/, 'cpus is a decimal number as a string, e.g. "0.5"')
      .refine((v) => Number(v) > 0 && Number(v) <= 64, 'cpus must be above 0 and at most 64')
      .optional(),
    pids_limit: z.number().int().min(8).max(4096).optional(),
    read_only: z
      .literal(true, { error: 'read_only cannot be turned off: every container has a read-only root (002 baseline)' })
      .optional(),
    /** Variables of the request passed into the container besides the base allow list. */
    env: z.array(EnvAllowEntrySchema).default([]),
  })
  .strict()
  .superRefine((spec, ctx) => {
    if (spec.network === 'default' && spec.profile !== 'network') {
      ctx.addIssue({
        code: 'custom',
        path: ['network'],
        message: `profile ${spec.profile} is offline; a tool that needs the network uses profile: network`,
      });
    }
  });
/** A parsed {@link ToolSandboxSpecSchema}. */
export type ToolSandboxSpec = z.infer<typeof ToolSandboxSpecSchema>;

/** What a container profile fixes: image, limits, network ceiling and identity rule. */
export interface ContainerProfile {
  readonly name: Exclude<SandboxProfileName, 'local'>;
  /** The image key in the provider's image table. */
  readonly image: 'stdio' | 'network' | 'builder';
  /** The most network this profile allows; the policy may only narrow it. */
  readonly network: 'none' | 'default';
  readonly memory: string;
  readonly cpus: string;
  readonly pidsLimit: number;
  readonly tmpfsSize: string;
  /** `policy`: uid 10001 for a read-only policy, the owner for a writable one; `host`: the owner of the build directory. */
  readonly identity: 'policy' | 'host';
  /** A cap on the request's timeout. */
  readonly maxTimeoutMs?: number;
  readonly envAllow: readonly string[];
}

/** The presets of 002, before a tool's own limits. */
export const PROFILE_PRESETS = {
  stdio: { name: 'stdio', image: 'stdio', network: 'none', memory: '256m', cpus: '0.5', pidsLimit: 64, tmpfsSize: '64m', identity: 'policy', envAllow: [] },
  network: { name: 'network', image: 'network', network: 'default', memory: '256m', cpus: '0.5', pidsLimit: 64, tmpfsSize: '64m', identity: 'policy', envAllow: [] },
  builder: {
    name: 'builder',
    image: 'builder',
    network: 'none',
    memory: '1g',
    cpus: '1',
    pidsLimit: 256,
    tmpfsSize: '512m',
    identity: 'host',
    maxTimeoutMs: BUILDER_TIMEOUT_MS,
    // 002: CARGO_HOME lives in the image's tmp and the build is offline.
    envAllow: ['CARGO_HOME', 'CARGO_NET_OFFLINE', 'RUSTFLAGS'],
  },
} as const satisfies Record<ContainerProfile['name'], ContainerProfile>;

/** How a tool runs: on the host through the host sandbox, or in a container of a profile. */
export type ResolvedProfile = { readonly kind: 'local'; readonly envAllow: readonly string[] } | { readonly kind: 'container'; readonly profile: ContainerProfile };

/** A tool spec's `sandbox:` block resolved to its preset with the tool's own limits applied. Throws a zod error on a bad spec. */
export function resolveProfile(input: unknown): ResolvedProfile {
  const spec = ToolSandboxSpecSchema.parse(input ?? {});
  if (spec.profile === 'local') return { kind: 'local', envAllow: spec.env };
  const preset: ContainerProfile = PROFILE_PRESETS[spec.profile];
  return {
    kind: 'container',
    profile: {
      ...preset,
      network: spec.network ?? preset.network,
      memory: spec.memory ?? preset.memory,
      cpus: spec.cpus ?? preset.cpus,
      pidsLimit: spec.pids_limit ?? preset.pidsLimit,
      envAllow: [...preset.envAllow, ...spec.env],
    },
  };
}

/**
 * The risk level a tool really has (002): a tool that the tool manager generated is high risk
 * whatever its author wrote, and so is anything running in the builder profile (only the tool
 * manager builds). Everything else keeps what it declares.
 */
export function effectiveRiskLevel(tool: { readonly declared: RiskLevel; readonly profile: SandboxProfileName; readonly generated: boolean }): RiskLevel {
  if (tool.generated || tool.profile === 'builder') return 'high';
  return tool.declared;
}
