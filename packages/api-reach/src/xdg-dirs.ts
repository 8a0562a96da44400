import { escapePattern, joinPath, slashPath } from './path.js';

/*
 * Tools that follow the XDG base directory spec (neovim, fish, git, direnv, systemd, helix, gh,
 * powerlevel10k, Chromium, …) look for their start files and credentials under
 * `$XDG_CONFIG_HOME`, `$XDG_CACHE_HOME`, `$XDG_DATA_HOME` and `$XDG_STATE_HOME` when those are
 * set, and under `~/.config`, `~/.cache`, `~/.local/share`, `~/.local/state` only when they are
 * not. The protected lists name the home defaults; with a base directory set elsewhere (a
 * dotfiles checkout, a directory inside a workspace), each entry under a default is also an entry
 * under the set directory (found by an attack on git's: h108, `$XDG_CONFIG_HOME/git/config`).
 */

/** The XDG base directories of the user, by kind, as the home defaults' replacements. */
export const XDG_BASES = { config: '.config', cache: '.cache', data: '.local/share', state: '.local/state' } as const;

/** One of the XDG base directory kinds. */
export type XdgKind = keyof typeof XDG_BASES;

/**
 * The XDG base directories the user set, by kind: each as set (absolute) and, where that is a
 * symlink or lies under one, its real path too (a command could repoint the link: both are
 * landings, found by an attack, h109). A kind left out is at its home default.
 */
export type XdgBaseDirs = { readonly [K in XdgKind]?: readonly string[] };

/** The variable that sets each kind. */
export const XDG_VARIABLES: Readonly<Record<XdgKind, string>> = { config: 'XDG_CONFIG_HOME', cache: 'XDG_CACHE_HOME', data: 'XDG_DATA_HOME', state: 'XDG_STATE_HOME' };

/**
 * The base directories an environment sets: absolute values only (the spec says a relative one is
 * invalid and is ignored, as the tools do). Real paths are the caller's to take.
 */
export function xdgBaseDirsOf(env: Readonly<Record<string, string | undefined>>): XdgBaseDirs {
  const out: { [K in XdgKind]?: string[] } = {};
  for (const kind of Object.keys(XDG_VARIABLES) as XdgKind[]) {
    const value = env[XDG_VARIABLES[kind]];
    if (value?.startsWith('/')) out[kind] = [value.replace(/\/+$/, '') || '/'];
  }
  return out;
}

/** The kind whose home default `rel` lies in (or is), and the rest of `rel` below it. */
function baseOf(rel: string): { kind: XdgKind; rest: string } | undefined {
  for (const kind of Object.keys(XDG_BASES) as XdgKind[]) {
    const base = XDG_BASES[kind];
    if (rel === base) return { kind, rest: '' };
    if (rel.startsWith(`${base}/`)) return { kind, rest: rel.slice(base.length + 1) };
  }
  return undefined;
}

/**
 * Where a home-relative path also is: under each set base directory when `rel` lies in a default
 * one and the user moved it; none otherwise (or where it is set to its default).
 */
export function xdgAliasOf(rel: string, home: string, xdg: XdgBaseDirs, platform: NodeJS.Platform): string[] {
  const at = baseOf(rel);
  if (at === undefined) return [];
  return (xdg[at.kind] ?? []).filter((set) => set !== joinPath(home, XDG_BASES[at.kind])).map((set) => (at.rest === '' ? slashPath(set, platform) : joinPath(set, at.rest)));
}

/**
 * The same for a regex tail matched after the home (`homePattern`): a whole-path pattern under each
 * set base directory when the tail starts with a default one (escaped, as the table writes it).
 */
export function xdgPatternAliasOf(tail: string, home: string, xdg: XdgBaseDirs, platform: NodeJS.Platform): string[] {
  for (const kind of Object.keys(XDG_BASES) as XdgKind[]) {
    const prefix = `${escapePattern(XDG_BASES[kind])}/`;
    if (!tail.startsWith(prefix)) continue;
    return (xdg[kind] ?? [])
      .filter((set) => set !== joinPath(home, XDG_BASES[kind]))
      .map((set) => `^${escapePattern(slashPath(set, platform).replace(/\/+$/, ''))}/${tail.slice(prefix.length)}$`);
  }
  return [];
}
