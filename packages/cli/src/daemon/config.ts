import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { AalisError, DEPLOYMENTS, IdentitySchema } from '@aalis/core';
import { ModelConfigSchema } from '@aalis/model';
import { AgentConfigSchema } from '@aalis/plugin-agent';
import { ApprovalConfigSchema } from '@aalis/plugin-approval';
import { ReachConfigSchema } from '@aalis/plugin-reach';
import { z } from 'zod';
import { PluginsConfigSchema } from './plugins.js';

/** The file names `aalis serve` looks for in the deployment directory, in order. */
export const CONFIG_FILES = ['aalis.config.json'] as const;

const PortSchema = z.number().int().min(0).max(65535);

/** The daemon's config file (`aalis.config.json` in the deployment directory). Unknown keys are errors. */
export const DaemonConfigSchema = z
  .object({
    /** Owner identities per chat platform: `{ "qq": ["12345"], "cli": ["me"] }`. */
    owners: z.record(z.string().min(1), z.array(z.string().min(1))).default({}),
    /** `host` or `docker`; `AALIS_DEPLOYMENT` and `--deployment` win over it. */
    deployment: z.enum(DEPLOYMENTS).optional(),
    /** The approval plugin's config (timeoutMs, codeLength). */
    approval: ApprovalConfigSchema.optional(),
    server: z
      .object({
        port: PortSchema.optional(),
        host: z.string().min(1).optional(),
        /** Names besides IP addresses and localhost a request's Host may give (a reverse proxy's); any other is refused (DNS rebinding). */
        allowedHosts: z.array(z.string().min(1).max(253).regex(/^[A-Za-z0-9.-]+$/, 'a host name: letters, digits, dots and dashes')).max(64).default([]),
      })
      .strict()
      .default({ allowedHosts: [] }),
    sandbox: z
      .object({ backend: z.enum(['auto', 'linux', 'darwin']).default('auto') })
      .strict()
      .default({ backend: 'auto' }),
    docker: z
      .object({
        /** The image of the stdio profile; `AALIS_DOCKER_IMAGE` wins over it. */
        image: z.string().min(1).optional(),
        networkImage: z.string().min(1).optional(),
        /** The prefix of this daemon's instance name; the name itself ends in a hash of the data directory, so it is unique per data directory. */
        instance: z
          .string()
          .regex(/^[a-z0-9][a-z0-9_.-]{0,49}$/, 'use 1-50 lower-case letters, digits, _ . -')
          .default('daemon'),
      })
      .strict()
      .default({ instance: 'daemon' }),
    console: z
      .object({
        /** Whom the console answers approvals as; always counted as an owner. Default: cli:<OS user>. */
        as: IdentitySchema.strict().optional(),
      })
      .strict()
      .default({}),
    /** The reach plugin's settings: `env.allow` / `env.deny`, the sandboxed command's environment filter. */
    reach: z.object({ env: ReachConfigSchema.shape.env }).strict().optional(),
    /** Plugins to load: package names or paths relative to this file, each with its config (validated by the plugin's own schema). */
    plugins: PluginsConfigSchema,
    /** Spec tools (002): the tools directory and the images their container profiles run in. */
    tools: z
      .object({
        /** The tools directory, relative to the deployment directory (or absolute); one folder a tool. */
        dir: z.string().min(1).default('tools'),
        /** `auto`: container profiles run on the engine of DOCKER_HOST when it answers at start; `off`: they are refused. */
        engine: z.enum(['auto', 'off']).default('auto'),
        images: z
          .object({
            /** Default: docker.image, else the test image scripts/prepare.sh builds. */
            stdio: z.string().min(1).optional(),
            network: z.string().min(1).optional(),
            /** Default: the builder image scripts/prepare.sh builds (`aalis/sandbox-builder:latest`). */
            builder: z.string().min(1).optional(),
          })
          .strict()
          .default({}),
        /** Variables of a call's sandbox env every spec tool gets besides the base allow list and its spec's `env`. */
        envAllow: z.array(z.string().min(1)).default([]),
      })
      .strict()
      .default({ dir: 'tools', engine: 'auto', images: {}, envAllow: [] }),
    /** Config of `@aalis/plugin-pod` when it is installed; passed through, the plugin validates it. */
    pod: z.record(z.string(), z.unknown()).optional(),
    /** The model the agent and the reviewer talk to: any OpenAI-compatible chat-completions endpoint (`baseURL`, `model`, `apiKeyEnv`, `requestTimeoutMs`). */
    model: ModelConfigSchema.optional(),
    /** The agent's limits (`maxSteps`, `toolResultMaxChars`). */
    agent: AgentConfigSchema.optional(),
  })
  .strict();
/** The daemon's config, validated. */
export type DaemonConfig = z.infer<typeof DaemonConfigSchema>;

/** A config file that is missing, unreadable or wrong: names the file, the field and the expectation. */
export class ConfigError extends AalisError<'invalid-config'> {
  override readonly name = 'ConfigError';
  constructor(
    readonly file: string,
    readonly field: string,
    readonly expected: string,
  ) {
    super('invalid-config', `${file}: ${field}: ${expected}`);
  }
}

/** The config and where it came from (`file` is undefined when none exists and defaults apply). */
export interface LoadedConfig {
  readonly file: string | undefined;
  readonly config: DaemonConfig;
}

/**
 * Reads and validates the config: `--config FILE` when given (it must exist), else the first of
 * {@link CONFIG_FILES} in the deployment directory, else the defaults.
 */
export function loadConfig(deploymentDir: string, explicit?: string): LoadedConfig {
  let file: string | undefined;
  if (explicit !== undefined) {
    file = resolve(explicit);
    if (!existsSync(file)) throw new ConfigError(file, '(file)', 'does not exist; pass an existing file to --config, or leave --config out to use aalis.config.json in the deployment directory');
  } else {
    file = CONFIG_FILES.map((name) => join(deploymentDir, name)).find((path) => existsSync(path));
    const yaml = ['aalis.config.yaml', 'aalis.config.yml'].map((name) => join(deploymentDir, name)).find((path) => existsSync(path));
    if (file === undefined && yaml !== undefined) throw new ConfigError(yaml, '(file)', 'YAML config is not read by this version; write the same settings as JSON in aalis.config.json');
  }
  if (file === undefined) return { file: undefined, config: DaemonConfigSchema.parse({}) };
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new ConfigError(file, '(file)', `is not readable JSON (${(error as Error).message})`);
  }
  return { file, config: parseConfig(file, raw) };
}

/** Validates a parsed config document; the first problem becomes a {@link ConfigError}. */
export function parseConfig(file: string, raw: unknown): DaemonConfig {
  const parsed = DaemonConfigSchema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  if (!issue) throw new ConfigError(file, '(root)', 'is not a valid config');
  const path = issue.path.map(String);
  if (issue.code === 'unrecognized_keys') {
    const at = path.length > 0 ? `${path.join('.')}.` : '';
    return fail(file, `${at}${issue.keys.join(', ')}`, `is not a known setting; the keys here are: ${knownKeys(path).join(', ')}`);
  }
  return fail(file, path.join('.') || '(root)', issue.message);
}

function fail(file: string, field: string, expected: string): never {
  throw new ConfigError(file, field, expected);
}

function knownKeys(path: readonly string[]): string[] {
  let schema: z.ZodType = DaemonConfigSchema;
  for (const key of path) {
    const shape = shapeOf(schema);
    const next = shape?.[key];
    if (!next) return [];
    schema = next;
  }
  return Object.keys(shapeOf(schema) ?? {});
}

function shapeOf(schema: z.ZodType): Record<string, z.ZodType> | undefined {
  let current: unknown = schema;
  // Unwrap defaults and optionals down to the object whose keys are listed.
  for (let i = 0; i < 5 && current && typeof current === 'object'; i++) {
    if (current instanceof z.ZodObject) return current.shape as Record<string, z.ZodType>;
    const def = (current as { def?: { innerType?: unknown } }).def;
    current = def?.innerType;
  }
  return undefined;
}
