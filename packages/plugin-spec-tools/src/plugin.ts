import { isAbsolute } from 'node:path';
import { realpath } from 'node:fs/promises';
import { sandbox } from '@aalis/api-reach';
import { definePlugin, makeDirs, tools } from '@aalis/core';
import { commandTools, editFileTool, listDirTool, movePathTool, readFileTool, writeFileTool } from '@aalis/plugin-tools';
import { DockerSandbox, EnvAllowEntrySchema } from '@aalis/sandbox-docker';
import { z } from 'zod';
import { ToolsAuditLog } from './audit-log.js';
import type { SpecRunDeps } from './run-spec-tool.js';
import { SpecToolRegistry } from './spec-registry.js';
import { type SpecToolsService, specTools } from './spec-tools-service.js';
import { toolManagerTool } from './tool-manager.js';

/** Config of {@link specToolsPlugin}. */
export const SpecToolsConfigSchema = z
  .object({
    /** The tools directory (absolute): one folder a tool. Made when missing. */
    dir: z.string().refine(isAbsolute, 'the tools directory must be an absolute path'),
    /** The engine's images and instance for container profiles; absent: container profiles are refused. */
    docker: z
      .object({
        images: z.object({ stdio: z.string().min(1), network: z.string().min(1).optional(), builder: z.string().min(1).optional() }).strict(),
        instance: z.string().min(1),
      })
      .strict()
      .optional(),
    /** Variables of the call's sandbox env passed to every spec tool besides the base allow list and its spec's `env`. */
    envAllow: z.array(EnvAllowEntrySchema).default([]),
  })
  .strict();

/** The built-in tools' names: reserved even before their plugin registers them. */
export const BUILTIN_TOOL_NAMES: readonly string[] = [readFileTool, listDirTool, writeFileTool, editFileTool, movePathTool, ...commandTools({ sandbox: () => undefined })].map((t) => t.name);

/**
 * Loads the spec tools of the tools directory onto the dispatcher, registers the tool manager,
 * and provides {@link specTools}. Container profiles run on the configured engine (its leftover
 * containers reaped at start); without one, or when it does not answer at start, they are
 * refused (fail closed) and `engine()` says why. Profile `local` runs through the host sandbox.
 */
export const specToolsPlugin = definePlugin({
  name: 'spec-tools',
  provides: [specTools],
  inject: [tools],
  optional: [sandbox],
  config: SpecToolsConfigSchema,
  async apply(ctx, config) {
    const dispatcher = ctx.get(tools);
    await makeDirs(config.dir);
    const dir = await realpath(config.dir);
    const host = ctx.maybe(sandbox);
    const box = new DockerSandbox({
      images: config.docker?.images ?? { stdio: 'aalis-no-engine' },
      instance: config.docker?.instance ?? 'spec-tools',
      envAllow: config.envAllow,
      ...(host !== undefined ? { local: host } : {}),
    });
    let engine: { configured: boolean; available: boolean; detail: string };
    if (config.docker === undefined) {
      engine = { configured: false, available: false, detail: 'no Docker engine is configured for tools in this deployment' };
    } else {
      const probe = await box.probe();
      const failed = probe.checks.filter((c) => !c.ok).map((c) => `${c.name}: ${c.detail}`);
      engine = probe.available ? { configured: true, available: true, detail: 'the engine answers and the images are present' } : { configured: true, available: false, detail: `the Docker engine is not usable (${failed.join('; ')})` };
      if (probe.available) await box.reapOrphans();
    }
    const deps: SpecRunDeps = { box, noEngine: () => (engine.available ? undefined : engine.detail) };
    const registry = new SpecToolRegistry(dispatcher, dir, deps, BUILTIN_TOOL_NAMES);
    const audit = new ToolsAuditLog(dir);
    ctx.onDispose(dispatcher.register(toolManagerTool({ registry, audit, run: deps })));
    await registry.reload();
    ctx.onDispose(() => registry.clear());
    const service: SpecToolsService = {
      dir,
      list: () => registry.list().map((t) => ({ name: t.spec.name, profile: t.spec.sandbox.profile, generated: t.spec.generated, dir: t.dir })),
      problems: () => registry.problems(),
      reload: () => registry.reload(),
      audit: () => audit.read(),
      engine: () => engine,
    };
    ctx.provide(specTools, service);
  },
});
