import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Plugin } from '@aalis/core';
import { z } from 'zod';

/**
 * `plugins` in aalis.config.json: each key a package name (`aalis-plugin-notes`, `@me/notes`) or a
 * path relative to the config file (`./plugins/notes`), each value that plugin's config, which its
 * own schema validates when the kernel starts it.
 */
export const PluginsConfigSchema = z.record(z.string().min(1), z.unknown()).default({});

/** One configured plugin: where it was looked for, and what became of it. */
export type ExtensionReport =
  | { readonly specifier: string; readonly from: string; readonly state: 'loaded'; readonly name: string }
  | { readonly specifier: string; readonly from: string | undefined; readonly state: 'failed'; readonly name?: string; readonly cause: string };

/** A plugin read from its module, with the config the file gave it. */
export interface LoadedExtension {
  readonly specifier: string;
  readonly from: string;
  readonly plugin: Plugin;
  readonly config: unknown;
}

const isRelative = (specifier: string) => specifier.startsWith('./') || specifier.startsWith('../') || isAbsolute(specifier);

/** The entry file a package directory names: `exports["."]` (import, default), else `main`, else index.js. */
function entryOfPackage(dir: string): string {
  const manifest = join(dir, 'package.json');
  if (!existsSync(manifest)) return join(dir, 'index.js');
  const pkg = JSON.parse(readFileSync(manifest, 'utf8')) as { exports?: unknown; main?: string };
  let entry: unknown = pkg.exports;
  if (entry && typeof entry === 'object' && '.' in entry) entry = (entry as Record<string, unknown>)['.'];
  // Conditions in the order Node picks them for an ESM import.
  for (let i = 0; i < 4 && entry && typeof entry === 'object'; i++) {
    const conditions = entry as Record<string, unknown>;
    entry = conditions.import ?? conditions.node ?? conditions.default;
  }
  return join(dir, typeof entry === 'string' ? entry : (pkg.main ?? 'index.js'));
}

/**
 * The directory whose files make up a path-named plugin (`./plugins/notes`): the directory named,
 * or the file's directory; undefined for a package name (in `node_modules`, control plane already).
 * Its whole tree is control plane: the entry's directory alone left the plugin's `package.json`
 * writable, and its `main` chose what the daemon ran next (found by an attack).
 */
export function pluginDirOf(specifier: string, baseDir: string): string | undefined {
  if (!isRelative(specifier)) return undefined;
  const path = resolve(baseDir, specifier);
  try {
    return statSync(path).isDirectory() ? path : dirname(path);
  } catch {
    return dirname(path); // not there yet: where it would be made
  }
}

/**
 * Where a specifier's module is: a relative path from `baseDir` (a file, or a directory with a
 * package.json or index.js), or a package in `node_modules` of `baseDir` or an ancestor. `undefined`
 * when there is nothing there.
 */
export function locatePlugin(specifier: string, baseDir: string): string | undefined {
  if (isRelative(specifier)) {
    const path = resolve(baseDir, specifier);
    if (!existsSync(path)) return undefined;
    return statSync(path).isDirectory() ? entryOfPackage(path) : path;
  }
  for (let dir = resolve(baseDir); ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', specifier);
    if (existsSync(join(candidate, 'package.json'))) return entryOfPackage(candidate);
    if (dirname(dir) === dir) return undefined;
  }
}

function isPlugin(value: unknown): value is Plugin {
  return typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'plugin' && typeof (value as { name?: unknown }).name === 'string' && typeof (value as { apply?: unknown }).apply === 'function';
}

/**
 * Imports every configured plugin. One that cannot be found, imported or does not export a plugin
 * is reported by its specifier and left out; the others load. Nothing here runs a plugin's `apply`.
 */
export async function loadExtensions(plugins: Readonly<Record<string, unknown>>, baseDir: string, reserved: readonly string[]): Promise<{ loaded: LoadedExtension[]; reports: ExtensionReport[] }> {
  const loaded: LoadedExtension[] = [];
  const reports: ExtensionReport[] = [];
  for (const [specifier, config] of Object.entries(plugins)) {
    const from = locatePlugin(specifier, baseDir);
    if (from === undefined) {
      const fix = isRelative(specifier) ? `check the path (relative to ${baseDir})` : `install it: npm install ${specifier}`;
      reports.push({ specifier, from, state: 'failed', cause: `not found; ${fix}` });
      continue;
    }
    let mod: Record<string, unknown>;
    try {
      mod = (await import(pathToFileURL(from).href)) as Record<string, unknown>;
    } catch (error) {
      reports.push({ specifier, from, state: 'failed', cause: `importing ${from} failed: ${error instanceof Error ? error.message : String(error)}` });
      continue;
    }
    const plugin = [mod.default, mod.plugin].find(isPlugin);
    if (!plugin) {
      reports.push({ specifier, from, state: 'failed', cause: `${from} exports no plugin; export one made with definePlugin from @aalis/core as the default export (or as 'plugin')` });
      continue;
    }
    const clash = reserved.includes(plugin.name) || loaded.some((l) => l.plugin.name === plugin.name);
    if (clash) {
      reports.push({ specifier, from, state: 'failed', name: plugin.name, cause: `a plugin named '${plugin.name}' is already loaded; plugin names must be unique` });
      continue;
    }
    loaded.push({ specifier, from, plugin, config });
    reports.push({ specifier, from, state: 'loaded', name: plugin.name });
  }
  return { loaded, reports };
}
