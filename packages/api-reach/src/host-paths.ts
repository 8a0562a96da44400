/** The forms an install takes: a source checkout with `packages/`, or a project `create-aalis` made. */
export const INSTALL_FORMS = ['source', 'npm'] as const;
/** One of {@link INSTALL_FORMS}. */
export type InstallForm = (typeof INSTALL_FORMS)[number];

/**
 * Where this daemon instance keeps its code and state, as real paths. The protected lists are
 * built from these; the caller (the reach plugin) takes the real paths at activation.
 */
export interface HostPaths {
  /** The install: the source checkout, or the project `create-aalis` generated (npm form). */
  readonly install: string;
  /** This instance's data directory. */
  readonly data: string;
  /** The default workspace (`workspace/` in the data directory): writable, readable. */
  readonly workspace: string;
  /** The temp area (`tmp/` in the data directory) whose subdirectories are the session temps. */
  readonly tmp: string;
  /** `self/` in the data directory: persona, skills and everything else that takes effect once stored. */
  readonly self: string;
  /** The log directory: control plane, but readable. */
  readonly logs: string;
  /** The main configuration file: control plane, but readable. */
  readonly config: string;
  /** `secrets.yaml`: control plane and never readable. */
  readonly secrets: string;
  /**
   * The deployment directory whose `data/` and `data-*` are the data directories of the instances
   * deployed together; absent when the instance was placed elsewhere (`--data`).
   */
  readonly deployment?: string;
}
