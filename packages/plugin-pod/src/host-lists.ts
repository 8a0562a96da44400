import { realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { type HostPaths, type ProtectedLists, protectedLists, withRealRoots } from '@aalis/api-reach';
import { realPathOfSync } from '@aalis/plugin-reach';
import type { z } from 'zod';
import type { PodHostSchema } from './config.js';

/** The daemon's paths and protected lists as the pod sees them (real paths, taken once at start). */
export interface PodHost {
  readonly paths: HostPaths;
  readonly userHome: string;
  readonly lists: ProtectedLists;
}

/**
 * Builds the same protected lists the reach plugin builds (the control plane, the landings, the
 * deny-read list) from the same inputs, so the pod's sandbox reads where the reach contract
 * lets reads go and never writes the control plane.
 */
export function podHostOf(host: z.output<typeof PodHostSchema>, kernelDataDir: string | undefined): PodHost {
  const platform = process.platform as 'linux' | 'darwin' | 'win32';
  const dataDir = host.data ?? kernelDataDir;
  if (dataDir === undefined) throw new Error("the pod needs a data directory: set 'host.data' or start the kernel with a dataDir");
  const data = realPathOfSync(dataDir);
  const paths: HostPaths = {
    install: realPathOfSync(host.install),
    data,
    workspace: join(data, 'workspace'),
    tmp: join(data, 'tmp'),
    self: join(data, 'self'),
    logs: join(data, 'logs'),
    config: realPathOfSync(host.configFile ?? join(data, 'config.yaml')),
    secrets: join(data, 'secrets.yaml'),
    ...(host.deployment !== undefined ? { deployment: realPathOfSync(host.deployment) } : {}),
  };
  const userHome = realPathOfSync(host.userHome ?? homedir());
  const lists = withRealRoots(
    protectedLists({
      paths,
      userHome,
      platform,
      form: host.form,
      codeDirs: host.codeDirs.map((d) => realPathOfSync(d)),
      ...(host.entry !== undefined ? { entry: realPathOfSync(host.entry) } : {}),
    }),
    (path) => {
      try {
        return realpathSync.native(path);
      } catch {
        return undefined;
      }
    },
  );
  return { paths, userHome, lists };
}
