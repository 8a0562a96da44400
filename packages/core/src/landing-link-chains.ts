import { lstatSync, readdirSync, statSync } from 'node:fs';
import { decodeName, hostPathArg } from './host-names.js';
import { type LinkChain, linkChainOf } from './link-chain.js';

/** The most entries of one landing folder (and the folders in it) looked at for links: hooks folders hold a few dozen. */
export const LANDING_FOLDER_LINKS_MAX = 512;

/** A landing that is a symlink, with the names it is resolved through and where it ends. */
export interface LandingLink {
  readonly link: string;
  readonly chain: LinkChain;
}

/*
 * A landing that is a symlink (`.git/hooks/pre-commit -> ../../scripts/pre-commit.sh`, `CLAUDE.md
 * -> docs/agent.md`) is judged by its own name, but the names it is resolved through and the file
 * it ends at are ordinary paths: writing one of them changes what runs (found by attacks, on the
 * sandbox's commit and on the host-side tools). Both ask the same question of the host, here: which
 * landings are symlinks, and through what.
 */

/**
 * The landing symlinks among `candidates` (paths as the host has them now) and directly inside the
 * candidates that are folders, also when the folder is itself a link (`.git/hooks -> ../githooks`),
 * dangling links included; `isLanding` says which paths are landings. Each with its chain
 * ({@link linkChainOf}); a link that changed while read is left out (the caller judges by name, as
 * before). Never follows a link to list it except a landing folder's own.
 */
export function landingLinkChains(candidates: Iterable<string>, isLanding: (path: string) => boolean): LandingLink[] {
  const links = new Set<string>();
  for (const path of new Set(candidates)) {
    const st = lstatOrNot(path);
    if (st === undefined || !isLanding(path)) continue;
    if (st.isSymbolicLink()) links.add(path);
    if (st.isDirectory() || (st.isSymbolicLink() && leadsToDirectory(path))) {
      // the folders inside too, never through a link (h106: `.cursor/rules/team.mdc ->
      // ../../docs/team-rules.md` and `.claude/hooks/pre.sh -> …` are two down from the folder the
      // table names, and the host tools wrote their files unasked): at most LANDING_FOLDER_LINKS_MAX entries a landing
      const folders = [path];
      let seen = 0;
      while (folders.length > 0 && seen < LANDING_FOLDER_LINKS_MAX) {
        const dir = folders.shift()!;
        for (const name of namesIn(dir).slice(0, LANDING_FOLDER_LINKS_MAX - seen)) {
          seen += 1;
          const entry = `${dir === '/' ? '' : dir}/${name}`;
          const est = lstatOrNot(entry);
          if (est === undefined || !isLanding(entry)) continue;
          if (est.isSymbolicLink()) links.add(entry);
          else if (est.isDirectory()) folders.push(entry);
        }
      }
    }
  }
  const found: LandingLink[] = [];
  for (const link of links) {
    try {
      found.push({ link, chain: linkChainOf(link) });
    } catch {
      // changed while read
    }
  }
  return found;
}

/** The entry's own status, or undefined when there is none to be had (missing, a loop or a file on the way). */
function lstatOrNot(path: string): ReturnType<typeof lstatSync> | undefined {
  try {
    return lstatSync(hostPathArg(path));
  } catch {
    return undefined;
  }
}

function namesIn(dir: string): string[] {
  try {
    return readdirSync(hostPathArg(dir), { encoding: 'buffer' }).slice(0, LANDING_FOLDER_LINKS_MAX).map(decodeName);
  } catch {
    return []; // unreadable: nothing can be followed there
  }
}

/** Whether a symlink leads to a directory (a loop, a dangling link: no). */
function leadsToDirectory(link: string): boolean {
  try {
    return statSync(hostPathArg(link)).isDirectory();
  } catch {
    return false;
  }
}
