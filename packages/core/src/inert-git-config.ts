/*
 * A repository a command made (`git init`, `git clone`, `cargo new`) is data, except for what git
 * runs from it: its hooks and its config (core.fsmonitor, core.hooksPath, aliases, filters, a
 * remote's uploadpack, includes…). A config that sets only what git itself writes when it makes a
 * repository, in the plain form git writes it, runs nothing. Judged strictly, line by line: a line
 * this cannot read exactly as git would (quotes, escapes, continuations, the old dotted section
 * form) is a problem, never skipped, so no reader differs from git's on what a config says.
 */

/** The keys a repository git made carries (`section.key`, or `section.*.key` with a subsection), none of which runs anything. */
export const INERT_GIT_CONFIG_KEYS = [
  'core.repositoryformatversion',
  'core.filemode',
  'core.bare',
  'core.logallrefupdates',
  'core.ignorecase',
  'core.precomposeunicode',
  'core.symlinks',
  'core.autocrlf',
  'core.sparsecheckout',
  'core.sparsecheckoutcone',
  'extensions.objectformat',
  'extensions.refstorage',
  'extensions.worktreeconfig',
  'remote.*.url',
  'remote.*.fetch',
  'remote.*.pushurl',
  'remote.*.promisor',
  'remote.*.partialclonefilter',
  'branch.*.remote',
  'branch.*.merge',
  'branch.*.rebase',
  'user.name',
  'user.email',
] as const;

const INERT = new Set<string>(INERT_GIT_CONFIG_KEYS);

/** The most of a new repository's config read: git writes a few hundred bytes. */
export const INERT_GIT_CONFIG_MAX_BYTES = 64 * 1024;

const HEADER = /^\[([A-Za-z][A-Za-z0-9-]*)(?:\s+"([^"\\\x00-\x1f\x7f]*)")?\]$/;
const ENTRY = /^([A-Za-z][A-Za-z0-9-]*)\s*=\s*([^"\\#;\x00-\x08\x0a-\x1f\x7f]*)$/;

/** A remote's address git would hand to a program other than its own transports (`ext::sh -c …`), or read as an option. */
function runsAProgram(url: string): boolean {
  return /^[A-Za-z][A-Za-z0-9+.-]*::/.test(url) || url.startsWith('-');
}

/**
 * Why the text of a new repository's config is not inert: the first line that sets a key outside
 * {@link INERT_GIT_CONFIG_KEYS}, or that cannot be read exactly as git reads it; undefined when
 * every line is a comment, a blank, a plain section header or a plain `key = value` of an inert key.
 */
export function gitConfigNotInert(bytes: Uint8Array): string | undefined {
  if (bytes.length > INERT_GIT_CONFIG_MAX_BYTES) return `it is larger than ${INERT_GIT_CONFIG_MAX_BYTES} bytes`;
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return 'it is not UTF-8 text';
  }
  let section: string | undefined;
  let sub: string | undefined;
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.replace(/\r$/, '').trim();
    const at = `line ${i + 1}`;
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const header = HEADER.exec(line);
    if (header) {
      section = header[1]!.toLowerCase();
      sub = header[2];
      continue;
    }
    const entry = ENTRY.exec(line);
    if (!entry) return `${at} is not the plain \`key = value\` or \`[section "name"]\` git writes (quotes, escapes, comments after a value and continued lines are not read here)`;
    if (section === undefined) return `${at} sets a key before any section`;
    const key = entry[1]!.toLowerCase();
    const name = sub === undefined ? `${section}.${key}` : `${section}.*.${key}`;
    if (!INERT.has(name)) return `${at} sets ${sub === undefined ? name : `${section}."${sub}".${key}`}, which is none of the keys git writes when it makes a repository (some run programs)`;
    const value = entry[2]!.trim();
    // `branch.*.remote` may hold an address itself (found by an attack, h106)
    if ((key === 'url' || key === 'pushurl' || key === 'remote') && runsAProgram(value)) return `${at} names a remote (${value}) that git would reach by running a program`;
  }
  return undefined;
}
