import { lstat, realpath } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { defineTool, listDirNoFollow, openForRead, readFileNoFollow, renameNoFollow, SafeFileError, shownBytes, type TempJournal, ToolError, utf8NameOf, walkTreeNoFollow, writeFileAtomic } from '@aalis/core';
import { pathIsUnder } from '@aalis/api-reach';
import { z } from 'zod';
import { credentialOf, requireOrThrow } from './credential.js';
import { hostToldLandingOf, landingLinksThrough, protectedPathsUnder } from './landing-links.js';
import { isNeverWritten, neverWrittenMessage } from './secrets.js';
import { toolPathOf } from './tool-path.js';

const MAX_READ = 1024 * 1024;
const MAX_EDIT = 64 * 1024 * 1024;
const platform = process.platform;

declare module '@aalis/core' {
  interface ToolCallExtensions {
    /** Where the file tools record their temp files, so a start after a crash removes them. */
    tempJournal?: TempJournal;
  }
}

/** The rules of the safe file layer that are refusals (the judged path is not what is there), not failures. */
const REFUSED = new Set(['final-symlink', 'parent-elsewhere', 'opened-elsewhere', 'bad-path', 'path-too-long', 'not-a-file', 'kernel-file-system']);

/**
 * Runs a host-side file operation through core's safe file layer and turns its refusal into a
 * tool error naming the path and the rule. Nothing is written when it refuses.
 */
async function safely<T>(doing: string, operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    if (error instanceof SafeFileError) {
      const what = doing.length > 240 ? `${doing.slice(0, 160)}…${doing.slice(-60)}` : doing;
      const detail = error.message.length > 600 ? `${error.message.slice(0, 200)}…${error.message.slice(-300)}` : error.message;
      throw new ToolError(REFUSED.has(error.code) ? 'denied' : 'failed', `${what} was refused (rule: ${error.code}): ${detail}`);
    }
    throw error;
  }
}

async function target(ctxHome: string | undefined, path: string, param = 'path'): Promise<string> {
  return toolPathOf(path, ctxHome ?? process.cwd(), param);
}

/** Reads a file (at most 1 MiB, from an offset). */
export const readFileTool = defineTool({
  name: 'read_file',
  description: 'Read a text file. Paths are relative to the main directory.',
  params: z.object({ path: z.string().min(1), offset: z.number().int().min(0).default(0) }).strict(),
  risk: 'low',
  async handler(ctx, params) {
    const credential = credentialOf(ctx);
    const path = await target(credential.home, params.path);
    await requireOrThrow(credential, { effect: 'read', path });
    const handle = await openOrExplain(path);
    try {
      const buffer = Buffer.alloc(MAX_READ + 1);
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, params.offset);
      return { path, content: buffer.subarray(0, Math.min(bytesRead, MAX_READ)).toString('utf8'), truncated: bytesRead > MAX_READ };
    } finally {
      await handle.close();
    }
  },
});

/** Lists a directory. */
export const listDirTool = defineTool({
  name: 'list_dir',
  description: "List the entries of a directory. An entry whose name is not UTF-8 carries notUtf8 (its bytes as \\xNN): its name is shown with U+FFFD and cannot be used as a path; rename it with run_command (mv with a glob) first.",
  params: z.object({ path: z.string().min(1).default('.') }).strict(),
  risk: 'low',
  async handler(ctx, params) {
    const credential = credentialOf(ctx);
    const path = await target(credential.home, params.path);
    await requireOrThrow(credential, { effect: 'read', path });
    // the judged directory and only it, never one on a kernel file system (core's listDirNoFollow)
    const entries = await safely(`listing ${path}`, () => listDirNoFollow(path));
    return {
      path,
      // A name that is not UTF-8 has no exact text form: shown with U+FFFD and marked with its
      // bytes, so the agent knows a path built from it names another file (and renames it first).
      entries: entries.map((e) => {
        const kind = e.isDirectory() ? 'dir' : e.isSymbolicLink() ? 'symlink' : e.isFile() ? 'file' : 'other';
        const name = utf8NameOf(e.name);
        return name !== undefined ? { name, kind } : { name: e.name.toString('utf8'), kind, notUtf8: shownBytes(e.name) };
      }),
    };
  },
});

async function checkedWriteTarget(ctx: Parameters<typeof readFileTool.handler>[0], rawPath: string, param = 'path'): Promise<string> {
  const credential = credentialOf(ctx);
  const path = await target(credential.home, rawPath, param);
  if (credential.exec !== 'host' && isNeverWritten(path, platform)) throw new ToolError('denied', neverWrittenMessage(path));
  // a write through a name is a write to that name too: a landing that is a symlink (CLAUDE.md ->
  // docs/agent.md) is judged by its name, not only by where it leads (found by an attack on the
  // sandbox's commit, the same seam on this side)
  for (const named of await typedNames(resolve(credential.home ?? process.cwd(), rawPath), credential.home)) {
    if (named !== path) await requireOrThrow(credential, { effect: 'write', path: named });
  }
  await requireOrThrow(credential, { effect: 'write', path });
  // and a write on the way a landing link resolves (its target, a folder or link it goes through) is one to that landing
  for (const landing of landingLinksThrough(credential, path)) await requireOrThrow(credential, { effect: 'write', path: landing });
  // no policy names a nested repository's hooks, what an .envrc loads, a disguised repository:
  // refused where the sandbox's commit refuses them
  const told = credential.exec === 'host' ? undefined : hostToldLandingOf(credential.home, path);
  if (told !== undefined) throw new ToolError('denied', told);
  return path;
}

/**
 * The path as typed, from each symlink on its way that judging it by its real path passes over:
 * the rest of the typed path under the link's real folder. Every link in the main directory
 * counts (`.git/hooks -> ../githooks`: `.git/hooks/pre-commit` is a landing by that name; found by
 * an attack), and the final name anywhere (`~/.bashrc -> dotfiles/bashrc`); a link above the main
 * directory (`/var` on macOS, a symlinked home) names no landing of its own and is passed over.
 */
async function typedNames(absolute: string, home: string | undefined): Promise<string[]> {
  const parts = absolute.split('/').filter((p) => p !== '');
  const out: string[] = [];
  let real = '/';
  for (let i = 0; i < parts.length; i++) {
    const next = join(real, parts[i]!);
    const st = await lstat(next).catch(() => undefined);
    if (st === undefined) break; // missing: nothing past it is a link
    if (!st.isSymbolicLink()) {
      real = next;
      continue;
    }
    const last = i === parts.length - 1;
    if (last || (home !== undefined && pathIsUnder(next, home, platform))) out.push(join(next, ...parts.slice(i + 1)));
    try {
      real = await realpath(next);
    } catch {
      break; // dangling: nothing past it to look up
    }
  }
  return out;
}

/** The path of a typed name that is itself a symlink, in its folder's real path; undefined for anything else. */
async function linkItself(home: string | undefined, rawPath: string): Promise<string | undefined> {
  const absolute = resolve(home ?? process.cwd(), rawPath);
  if (absolute === '/') return undefined;
  const named = join(await target(home, dirname(absolute)), basename(absolute));
  return (await lstat(named).catch(() => undefined))?.isSymbolicLink() ? named : undefined;
}

/** Writes a whole file, creating its directories. */
export const writeFileTool = defineTool({
  name: 'write_file',
  description: 'Write a whole text file, creating parent directories.',
  params: z.object({ path: z.string().min(1), content: z.string() }).strict(),
  risk: 'medium',
  async handler(ctx, params) {
    const path = await checkedWriteTarget(ctx, params.path);
    // The judged path, and only it: no symlink followed, no directory made before its parent is verified.
    await safely(`writing ${path}`, () => writeFileAtomic(path, params.content, { createParents: true, journal: ctx.tempJournal }));
    return { path, bytes: Buffer.byteLength(params.content) };
  },
});

/** Replaces text in a file: `oldText` must occur exactly once unless `replaceAll`. */
export const editFileTool = defineTool({
  name: 'edit_file',
  description: 'Replace text in a file. oldText must occur exactly once unless replaceAll is set.',
  params: z.object({ path: z.string().min(1), oldText: z.string().min(1), newText: z.string(), replaceAll: z.boolean().default(false) }).strict(),
  risk: 'medium',
  async handler(ctx, params) {
    const credential = credentialOf(ctx);
    const path = await checkedWriteTarget(ctx, params.path);
    await requireOrThrow(credential, { effect: 'read', path });
    const text = (
      await readFileNoFollow(path, MAX_EDIT).catch((error: unknown) => {
        if (error instanceof SafeFileError && error.code === 'missing') throw new ToolError('failed', `cannot edit ${path}: it does not exist (use write_file to create it).`);
        return safely(`reading ${path}`, () => Promise.reject(error));
      })
    ).toString('utf8');
    const count = text.split(params.oldText).length - 1;
    if (count === 0) throw new ToolError('failed', `oldText was not found in ${path}; nothing was changed.`);
    if (count > 1 && !params.replaceAll) throw new ToolError('failed', `oldText occurs ${count} times in ${path}; give more context or set replaceAll. Nothing was changed.`);
    const next = params.replaceAll ? text.split(params.oldText).join(params.newText) : text.replace(params.oldText, () => params.newText);
    await safely(`writing ${path}`, () => writeFileAtomic(path, next, { journal: ctx.tempJournal }));
    return { path, replacements: params.replaceAll ? count : 1 };
  },
});

/** Moves a file or directory; both the source and the target are checked as writes. */
export const movePathTool = defineTool({
  name: 'move_path',
  description: 'Move or rename a file or directory. An existing target is refused unless overwrite is true (then a file or empty directory there is replaced).',
  params: z.object({ from: z.string().min(1), to: z.string().min(1), overwrite: z.boolean().default(false) }).strict(),
  risk: 'medium',
  async handler(ctx, params) {
    const credential = credentialOf(ctx);
    // a link is moved as the link, as `mv` does (found by an attack: the folder it named was moved
    // and the link left dangling): its own name, in its real folder, is what is judged and moved
    const link = await linkItself(credential.home, params.from);
    const from = link ?? (await checkedWriteTarget(ctx, params.from, 'from'));
    if (link !== undefined) {
      if (credential.exec !== 'host' && isNeverWritten(link, platform)) throw new ToolError('denied', neverWrittenMessage(link));
      await requireOrThrow(credential, { effect: 'write', path: link });
      for (const landing of landingLinksThrough(credential, link)) await requireOrThrow(credential, { effect: 'write', path: landing });
    }
    const to = await checkedWriteTarget(ctx, params.to, 'to');
    for (const shadowed of protectedPathsUnder(credential, to)) await requireOrThrow(credential, { effect: 'write', path: shadowed });
    const stat = await lstat(from).catch(() => {
      throw new ToolError('failed', `cannot move ${from}: it does not exist.`);
    });
    // A move carries the contents to a new name, where the deny-read rules of the old one no
    // longer hold: everything moved must be readable where it is.
    await requireOrThrow(credential, { effect: 'read', path: from });
    if (stat.isDirectory()) {
      const hidden = await firstUnreadable(from, (path) => credential.allows('read', path));
      if (hidden !== undefined) {
        throw new ToolError('denied', `moving ${from} was refused (rule: deny-read): it holds ${hidden}, which is on the deny-read list and would become readable under the new name. This cannot be requested; move the other entries one by one.`);
      }
    }
    // never a silent loss: what sits at the target stays unless the call says to replace it (found
    // by an attack: a move onto an existing file replaced it, no ask, no copy kept)
    const existing = await lstat(to).catch(() => undefined);
    if (existing !== undefined && params.overwrite !== true) {
      throw new ToolError('failed', `moving ${from} to ${to} was refused (rule: exists): something is at ${to} already, and a move would replace it. Nothing was moved; pass overwrite: true to replace it, or choose another name.`);
    }
    await safely(`moving ${from} to ${to}`, () => renameNoFollow(from, to, { createParents: true, replace: params.overwrite === true }));
    return { from, to };
  },
});

const MOVE_WALK_LIMIT = 20_000;

/**
 * The first entry under `dir` that may not be read, walking at most {@link MOVE_WALK_LIMIT} entries
 * (past that: refused). Walked by descriptors (core `walkTreeNoFollow`): a subdirectory swapped for
 * a symlink meanwhile is refused, never followed, and a tree past PATH_MAX is walked, not failed on.
 * Names are bytes: one that is not UTF-8 would come back as text with U+FFFD, naming another path
 * than the entry's, so it is refused (its contents cannot be judged).
 */
async function firstUnreadable(dir: string, readable: (path: string) => boolean): Promise<string | undefined> {
  let seen = 0;
  let hidden: string | undefined;
  await safely(`checking what ${dir} holds`, () =>
    walkTreeNoFollow(dir, (entry) => {
      const name = utf8NameOf(entry.name);
      if (name === undefined) {
        const holder = entry.path.subarray(0, entry.path.length - entry.name.length - 1).toString('utf8');
        throw new ToolError(
          'denied',
          `moving ${dir} was refused (rule: not-utf8): ${shortened(holder)} holds an entry named '${shownBytes(entry.name)}', which is not UTF-8, so it and what it holds cannot be judged against the deny-read list by name. This cannot be requested; rename it first with run_command (mv with a glob), or move the other entries one by one.`,
        );
      }
      if (++seen > MOVE_WALK_LIMIT) throw new ToolError('denied', `moving ${dir} was refused: it holds more than ${MOVE_WALK_LIMIT} entries, too many to check against the deny-read list. Move smaller parts.`);
      const path = entry.path.toString('utf8');
      if (!readable(path)) {
        hidden = path;
        return 'stop';
      }
      return 'enter';
    }),
  );
  return hidden === undefined ? undefined : shortened(hidden);
}

/** A path for a message: one past a few hundred bytes keeps its start and its end. */
function shortened(path: string): string {
  return path.length > 240 ? `${path.slice(0, 160)}…${path.slice(-60)}` : path;
}

async function openOrExplain(path: string) {
  try {
    return await openForRead(path);
  } catch (error) {
    const code = error instanceof SafeFileError ? error.code : undefined;
    const why = code === 'missing' ? 'it does not exist' : code === 'not-a-file' ? 'it is not a regular file (use list_dir for a directory)' : (error as Error).message;
    throw new ToolError(code !== undefined && REFUSED.has(code) && code !== 'not-a-file' ? 'denied' : 'failed', `cannot read ${path}: ${why}.`);
  }
}
