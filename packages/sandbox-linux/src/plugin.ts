import { sandbox } from '@aalis/api-reach';
import { definePlugin } from '@aalis/core';
import { z } from 'zod';
import { HOST_MODELS } from './overlay-mount.js';
import { ROOT_UID_MAPS } from './root-map.js';
import { createLinuxSandbox } from './service.js';

/** Plugin config: where the tools are and how far a scan may go. */
export const LinuxSandboxConfigSchema = z
  .object({
    bwrap: z.string().min(1).optional(),
    slirp4netns: z.string().min(1).optional(),
    nft: z.string().min(1).optional(),
    tmpDir: z.string().startsWith('/').optional(),
    undoneDir: z.string().startsWith('/').optional(),
    maxScanEntries: z.number().int().positive().optional(),
    /** How writes are kept from the host until judged: `auto` (default), `overlay` (required), `look`. */
    hostModel: z.enum(HOST_MODELS).optional(),
    /** Daemon run by root: `on` (default) maps its commands off the host's uid 0 and fails closed where it cannot; `off` runs them as the host's root. */
    rootUidMap: z.enum(ROOT_UID_MAPS).optional(),
  })
  .strict()
  .default({});

/**
 * Provides the `sandbox` service with this backend. It does not probe at start: a machine
 * without bubblewrap still starts, and every run there fails closed with the fix in the error.
 */
export const linuxSandboxPlugin = definePlugin({
  name: 'sandbox-linux',
  provides: [sandbox],
  config: LinuxSandboxConfigSchema,
  apply(ctx, config) {
    ctx.provide(
      sandbox,
      createLinuxSandbox({
        ...(config.bwrap ? { bwrap: config.bwrap } : {}),
        ...(config.slirp4netns ? { slirp4netns: config.slirp4netns } : {}),
        ...(config.nft ? { nft: config.nft } : {}),
        ...(config.tmpDir ? { tmpDir: config.tmpDir } : {}),
        ...(config.undoneDir ? { undoneDir: config.undoneDir } : {}),
        ...(config.maxScanEntries ? { scan: { maxEntries: config.maxScanEntries } } : {}),
        ...(config.hostModel ? { hostModel: config.hostModel } : {}),
        ...(config.rootUidMap ? { rootUidMap: config.rootUidMap } : {}),
      }),
    );
  },
});
