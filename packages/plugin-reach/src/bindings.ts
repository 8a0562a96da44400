import type { Reach, SecretEnvConfig } from '@aalis/api-reach';
import type { ReachHost } from './host.js';
import { defineService, type OriginTurn } from '@aalis/core';

/** Where a session works: its main directory, extra writable roots, the worktrees its tree made. */
export interface Binding {
  readonly home: string;
  readonly extraRoots: readonly string[];
  readonly worktrees: readonly string[];
  /** The git directories of the repository `home` is in (found at bind time). */
  readonly gitDirs: readonly string[];
  /** The directories `core.hooksPath` names for that repository (found at bind time): landings. */
  readonly hooksDirs: readonly string[];
}

/** Binds sessions to places; plugin-reach provides it next to `reach`. */
export interface ReachBindings {
  /** Binds a (root) session to a main directory and extra roots; paths become real paths now. */
  bind(sessionId: string, place: { home: string; extraRoots?: readonly string[]; worktrees?: readonly string[] }): Binding;
  /** The binding a session's calls use: its own, or the default (the data directory's workspace). */
  bindingOf(sessionId: string): Binding;
}

/** The bindings service descriptor. */
export const reachBindings = defineService<ReachBindings>('reach/bindings');

/** The resolved reach of a turn, for explaining decisions (`aalis explain`, `aalis policy`). */
export interface ReachInspector {
  /** This instance's paths and protected lists, as the reach plugin built them at activation. */
  host(): ReachHost;
  /** The reach a call of this turn gets under the session's current settings. */
  reachOf(turn: OriginTurn): Promise<Reach>;
  /** The config's allow and deny lists of the sandbox's environment filter. */
  secretEnv(): SecretEnvConfig;
}

/** The inspector service descriptor; plugin-reach provides it next to `reach`. */
export const reachInspector = defineService<ReachInspector>('reach/inspect');
