import type { Reach } from '@aalis/api-reach';
import type { ReachInstance } from './instance.js';
import { defineService, type OriginTurn } from '@aalis/core';

/** Where a session works: its main directory, extra writable roots, the worktrees its tree made. */
export interface Binding {
  readonly home: string;
  readonly extraRoots: readonly string[];
  readonly worktrees: readonly string[];
  /** The git directories of the repository `home` is in (found at bind time). */
  readonly gitDirs: readonly string[];
  /** Where the session temp is made instead of the data directory's `tmp/` (a deployment user's own). */
  readonly tmp?: string;
  /** The toolchain caches writable in the workspace tier instead of the owner's (a deployment user's own). */
  readonly caches?: readonly string[];
  /**
   * The person's own space (`<personSpaces>/<id>`, a real path) when the binding is a person's in
   * the docker deployment: the one space under `personSpaces` its calls may reach.
   */
  readonly space?: string;
}

/** Where a session works, as given to {@link ReachBindings.bind}. */
export interface Place {
  readonly home: string;
  readonly extraRoots?: readonly string[];
  readonly worktrees?: readonly string[];
  readonly tmp?: string;
  readonly caches?: readonly string[];
  /**
   * The person (`settingsScopeOf(turn)`) this binding is for: their turns in the session use it
   * before the session's own binding. The docker deployment binds each person of a shared
   * conversation to their own space.
   */
  readonly person?: string;
  /**
   * The person's own space in the docker deployment (`<personSpaces>/<id>`, holding `home` and
   * `tmp`): every other space under the reach plugin's `personSpaces` is refused to their calls.
   */
  readonly space?: string;
}

/**
 * Payload of `reach/main-directory-changed`: a bind moved a (root) conversation's main directory,
 * or one person's in it. Anything holding on to the old place (a background command started
 * there) no longer runs where the conversation works.
 */
export interface MainDirectoryChangedEvent {
  readonly sessionId: string;
  /** Set when only this person's binding in the conversation moved. */
  readonly person?: string;
  /** The real path calls of that conversation (or person) used before the bind. */
  readonly previous: string;
  readonly next: string;
}

declare module '@aalis/core' {
  interface KernelEvents {
    'reach/main-directory-changed': (event: MainDirectoryChangedEvent) => void;
  }
}

/** Binds sessions to places; plugin-reach provides it next to `reach`. */
export interface ReachBindings {
  /**
   * Binds a (root) session, or one person in it, to a main directory and extra roots; paths become
   * real paths now. When the main directory its calls use changes, `reach/main-directory-changed` is emitted.
   */
  bind(sessionId: string, place: Place): Binding;
  /** The binding a session's calls use: its own, or the default (the data directory's workspace). */
  bindingOf(sessionId: string): Binding;
}

/** The bindings service descriptor. */
export const reachBindings = defineService<ReachBindings>('reach/bindings');

/**
 * A read-only view of what the reach plugin resolved: this instance's lists and a turn's reach.
 * For explaining decisions (`aalis explain`, `aalis policy`) and for plugins that build their own
 * sandbox policy from the same lists (the pod).
 */
export interface ReachView {
  /** This instance's paths and protected lists, as the reach plugin built them at activation. */
  instance(): ReachInstance;
  /** The reach a call of this turn gets under the session's current settings. */
  reachOf(turn: OriginTurn): Promise<Reach>;
}

/** The reach view's service descriptor; plugin-reach provides it next to `reach`. */
export const reachView = defineService<ReachView>('reach/view');
