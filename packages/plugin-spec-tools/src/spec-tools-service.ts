import { defineService } from '@aalis/core';
import type { SandboxProfileName } from '@aalis/sandbox-docker';
import type { AuditEntry } from './audit-log.js';
import type { SpecProblem } from './load-specs.js';
import type { ReloadOutcome } from './spec-registry.js';

/** What the daemon (API, doctor, console) sees of the spec tools. */
export interface SpecToolsService {
  /** The tools directory, a real path. */
  readonly dir: string;
  list(): { name: string; profile: SandboxProfileName; generated: boolean; dir: string }[];
  /** The folders the last load left out, each with its file and field. */
  problems(): readonly SpecProblem[];
  /** Reads the tools directory again. */
  reload(): Promise<ReloadOutcome>;
  /** The tool manager's audit log. */
  audit(): Promise<AuditEntry[]>;
  /** Whether container profiles can run here, and why not. */
  engine(): { configured: boolean; available: boolean; detail: string };
}
/** The spec tools service descriptor. */
export const specTools = defineService<SpecToolsService>('spec-tools');
