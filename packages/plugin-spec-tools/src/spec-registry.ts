import type { ToolDispatcher } from '@aalis/core';
import { type LoadedSpec, loadToolSpecs, type SpecProblem } from './load-specs.js';
import type { SpecRunDeps } from './run-spec-tool.js';
import { specToolOf } from './spec-tool.js';

/** What a (re)load did, for the tool manager's result and the daemon's log: never a string to parse. */
export interface ReloadOutcome {
  readonly ok: boolean;
  /** Every spec tool registered now. */
  readonly loaded: readonly string[];
  readonly added: readonly string[];
  readonly removed: readonly string[];
  /** Folders left out, each with its file and field. */
  readonly problems: readonly SpecProblem[];
}

/** The tool manager's own name: reserved, it cannot change itself. */
export const TOOL_MANAGER = 'tool_manager';

/**
 * The spec tools of one tools directory, registered on the dispatcher. `reload` reads the
 * directory again and swaps the registrations; reloads run one at a time.
 */
export class SpecToolRegistry {
  #current = new Map<string, { loaded: LoadedSpec; unregister: () => void }>();
  #problems: readonly SpecProblem[] = [];
  #queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly dispatcher: ToolDispatcher,
    /** The tools directory, a real path. */
    readonly dir: string,
    private readonly deps: SpecRunDeps,
    /** Names reserved whether or not their plugin has registered them yet (the built-in tools). */
    private readonly builtins: readonly string[] = [],
  ) {}

  /** Names no spec may take: the built-in tools, every other tool on the dispatcher, and the tool manager. */
  reserved(): Set<string> {
    const names = new Set(this.dispatcher.list().map((t) => t.name));
    for (const name of this.#current.keys()) names.delete(name);
    for (const name of [...this.builtins, TOOL_MANAGER]) names.add(name);
    return names;
  }

  /** The spec tools registered now. */
  list(): LoadedSpec[] {
    return [...this.#current.values()].map((c) => c.loaded);
  }

  /** A registered spec tool by name. */
  get(name: string): LoadedSpec | undefined {
    return this.#current.get(name)?.loaded;
  }

  /** The folders the last load left out. */
  problems(): readonly SpecProblem[] {
    return this.#problems;
  }

  /** Reads the directory again and registers what loaded in place of what was; see {@link ReloadOutcome}. */
  reload(): Promise<ReloadOutcome> {
    const next = this.#queue.then(() => this.#reload());
    this.#queue = next.catch(() => undefined);
    return next;
  }

  /** Removes every registration (plugin stop). */
  clear(): void {
    for (const { unregister } of this.#current.values()) unregister();
    this.#current.clear();
  }

  async #reload(): Promise<ReloadOutcome> {
    const { tools, problems } = await loadToolSpecs(this.dir, this.reserved());
    const before = new Set(this.#current.keys());
    this.clear();
    const left = [...problems];
    for (const loaded of tools) {
      try {
        this.#current.set(loaded.spec.name, { loaded, unregister: this.dispatcher.register(specToolOf(loaded, this.deps)) });
      } catch (error) {
        // Another plugin registered the name meanwhile: the spec gives way.
        left.push({ tool: loaded.spec.name, file: loaded.file, field: 'name', message: `not registered: ${(error as Error).message}` });
      }
    }
    this.#problems = left;
    const problemsNow = left;
    const loadedNames = [...this.#current.keys()];
    return {
      ok: problemsNow.length === 0,
      loaded: loadedNames,
      added: loadedNames.filter((n) => !before.has(n)),
      removed: [...before].filter((n) => !this.#current.has(n)),
      problems: problemsNow,
    };
  }
}
