import { lstatSync, readdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { type PathRule, patternLiteral } from '@aalis/api-reach';
import { encodePath } from '@aalis/core';
import { walk, type WalkEntry, walkRoot } from './host-walk.js';

/*
 * Docker writes in place: a protected file with another hard link under the writable roots is
 * written through that name, past its read-only mount (found by an attack, h116: a hook, a
 * `.git/config` and a person's `~/.bashrc` hard-linked to writable names). The plan finds those
 * names by identity and mounts them read-only too.
 */

/**
 * The files a deny pattern matches directly in the folder its literal start names, where that
 * folder lies outside the writable roots (`^/home/u/\.(?:vimrc|gvimrc|…)`: the home's own entries):
 * landings a person may have hard-linked into the workspace (found by an attack, h120: `~/.vimrc`
 * linked as `dotfiles/vimrc` was written through it). One level, each folder listed once.
 */
export function patternNamedOutside(rules: readonly PathRule[], inWriteRoot: (path: string) => boolean): string[] {
  const byFolder = new Map<string, RegExp[]>();
  for (const rule of rules) {
    if (!('pattern' in rule)) continue;
    const { literal } = patternLiteral(rule.pattern);
    const folder = literal.endsWith('/') ? literal.slice(0, -1) : dirname(literal);
    if (!folder.startsWith('/') || folder === '/' || inWriteRoot(folder)) continue;
    try {
      byFolder.set(folder, [...(byFolder.get(folder) ?? []), new RegExp(rule.pattern)]);
    } catch {
      // not a pattern this engine reads: the rule's own matcher judges it elsewhere
    }
  }
  const out: string[] = [];
  for (const [folder, patterns] of byFolder) {
    let names: string[];
    try {
      names = readdirSync(folder).slice(0, ALIAS_FOLDER_NAMES);
    } catch {
      continue;
    }
    for (const name of names) {
      const path = `${folder}/${name}`;
      if (patterns.some((p) => p.test(path))) out.push(path);
    }
  }
  return out;
}

/** The most entries of one folder {@link patternNamedOutside} looks at. */
const ALIAS_FOLDER_NAMES = 10_000;

/**
 * The writable names under `writeRoots` of the protected files that have other hard links: the
 * denied entries the walks noted, and the files the rules name outside the writable roots (a
 * person's `~/.bashrc` linked into the workspace). Walked again only when one has another link.
 */
export async function protectedAliases(deniedInodes: ReadonlyMap<string, readonly Buffer[]>, named: readonly string[], writeRoots: readonly string[], walkLimit: number, writableAt: (path: string) => boolean): Promise<WalkEntry[]> {
  const linked = new Set<string>();
  const note = (path: Buffer | string) => {
    try {
      const st = lstatSync(path, { bigint: true });
      if (st.isFile() && st.nlink > 1n) linked.add(`${st.dev}:${st.ino}`);
    } catch {
      // gone or closed: nothing written through it
    }
  };
  for (const paths of deniedInodes.values()) if (paths[0] !== undefined) note(paths[0]);
  for (const path of named) note(encodePath(path));
  if (linked.size === 0) return [];
  const out: WalkEntry[] = [];
  const budget = { left: walkLimit };
  for (const root of writeRoots) {
    await walk(walkRoot(root), budget, (entry) => {
      if (entry.isSymbolicLink) return false;
      if (entry.isDirectory) return true;
      if (!writableAt(entry.path)) return false;
      try {
        const st = lstatSync(entry.bytes, { bigint: true });
        if (st.nlink > 1n && linked.has(`${st.dev}:${st.ino}`)) out.push(entry);
      } catch {
        // gone meanwhile
      }
      return false;
    });
  }
  return out;
}
