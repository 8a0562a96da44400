import type { SandboxPolicy } from '@aalis/api-reach';
import type { DockerSandbox } from './docker-sandbox.js';

/** One user's corner of the docker deployment: their own data directory and their own containers. */
export interface UserSpace {
  readonly userId: string;
  /** `<dataRoot>/users/<id>`: nothing outside it is ever mounted into this user's containers. */
  readonly dataDir: string;
  readonly workspace: string;
  /** The user's temp, writable by the restricted uid 10001; session temps are made in it. */
  readonly tmp: string;
  /** The user's `HOME` in their containers; only its toolchain caches are ever writable. */
  readonly home: string;
  /** The toolchain caches under {@link home} (`.cache`, `.npm`, …), writable in the workspace tier. */
  readonly caches: readonly string[];
  /** Runs this user's commands, each in its own container labelled with the user. */
  readonly sandbox: DockerSandbox;
  /** The user's base policy: `readonly` writes only the temp (and runs as uid 10001), `workspace` the workspace and caches too. */
  policy(access: 'readonly' | 'workspace'): SandboxPolicy;
}
