import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { type ExtraLanding, protectedLists, resolveReach, type SandboxPolicy, sandboxPolicyOf } from '@aalis/api-reach';
import { ENVRC_MAX_BYTES, envrcReferences, gitConfigEntries, gitConfigProgramPaths, readRegularSync } from '@aalis/core';
import { tempDir } from './engine.js';

/** A home with an instance's data, a workspace `ws` that is a git repository, and the policy a daemon gives a call there. */
export interface LandingScene {
  readonly home: string;
  readonly ws: string;
  readonly tmp: string;
  /** The workspace-tier policy of the owner's call at `ws` (api-reach's lists with {@link mainDirLandings}). */
  readonly policy: SandboxPolicy;
}

/** Runs git on the host, with no system config and `cwd` as its home. */
export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', stdio: 'pipe', env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: cwd } });
}

/** An empty commit in the repository at `cwd`. */
export function commit(cwd: string, message: string): void {
  git(cwd, '-c', 'user.email=a@b', '-c', 'user.name=a', 'commit', '-q', '--allow-empty', '-m', message);
}

/**
 * What the reach plugin adds to the landings for every call in the main directory `ws` (its
 * `hooksPathLandings` and `envrcLandingsOf`, which this package may not import): the main
 * repository's core.hooksPath and the programs its config names by path, and what the `.envrc`
 * files at and above `ws` load. Nested repositories and `.envrc` files below are not read here.
 */
export function mainDirLandings(ws: string, home: string): ExtraLanding[] {
  const out: ExtraLanding[] = [];
  const entries = gitConfigEntries(join(ws, '.git', 'config'), home);
  for (const program of gitConfigProgramPaths(entries, home, ws)) out.push({ path: program });
  for (const e of entries) if (e.section === 'core' && e.subsection === undefined && e.key === 'hookspath' && e.value) out.push({ path: resolve(ws, e.value) });
  for (let dir = ws; ; dir = dirname(dir)) {
    const envrc = join(dir, '.envrc');
    const read = readRegularSync(envrc, { maxBytes: ENVRC_MAX_BYTES, follow: true });
    if (read.kind === 'read') {
      const refs = envrcReferences(envrc, read.bytes.toString('utf8'), home, process.env);
      for (const path of refs.paths) out.push({ path });
      for (const pattern of refs.patterns) out.push({ pattern });
    }
    if (dirname(dir) === dir) return out;
  }
}

/**
 * A scene under a new temp folder named `prefix…`: `before` sets the workspace up, then the
 * policy is built. `worktree`: the workspace is a linked worktree of a repository beside it
 * (`git worktree add ../project`), not a repository of its own.
 */
export function landingScene(prefix: string, before?: (ws: string, home: string) => void, worktree = false): LandingScene {
  const home = tempDir(prefix);
  const data = join(home, '.aalis');
  const ws = join(home, 'project');
  const tmp = join(data, 'tmp', 'session-1');
  mkdirSync(tmp, { recursive: true });
  let gitDirs = [join(ws, '.git')];
  if (worktree) {
    const main = join(home, 'main');
    mkdirSync(main);
    git(main, 'init', '-q');
    commit(main, 'first');
    git(main, 'worktree', 'add', '-q', ws, '-b', 'wt');
    gitDirs = [join(main, '.git', 'worktrees', 'project'), join(main, '.git')];
  } else {
    mkdirSync(ws, { recursive: true });
    git(ws, 'init', '-q');
  }
  before?.(ws, home);
  const paths = {
    install: join(home, 'aalis'),
    data,
    workspace: ws,
    tmp: join(data, 'tmp'),
    self: join(data, 'self'),
    logs: join(data, 'logs'),
    config: join(data, 'config.yaml'),
    secrets: join(data, 'secrets.yaml'),
    deployment: home,
  };
  const lists = protectedLists({ paths, userHome: home, platform: 'linux', form: 'source', codeDirs: [], extraLandings: mainDirLandings(ws, home) });
  const reach = resolveReach({ principal: 'owner', tier: 'workspace', onBoundary: 'ask', place: { home: ws }, gitDirs, sessionTmp: tmp, localPorts: [], lists, paths });
  return { home, ws, tmp, policy: sandboxPolicyOf(reach) };
}

/** Whether git, run in `dir` on the host, takes `dir` itself for a (bare) git directory. */
export function gitTakesForRepo(dir: string): boolean {
  try {
    const out = execFileSync('git', ['rev-parse', '--git-dir'], { cwd: dir, encoding: 'utf8', stdio: 'pipe', env: { ...process.env, GIT_CEILING_DIRECTORIES: dirname(dir), GIT_CONFIG_NOSYSTEM: '1' } });
    return out.trim() === '.';
  } catch {
    return false;
  }
}

/** A shell line that prints a hook that leaves a mark when a host tool runs it. */
export const HOOK = "printf '#!/bin/sh\\ntouch /tmp/pwned\\n'";
/** A write no rule is about: that it landed shows the command ran. */
export const UNRELATED = 'echo ok > unrelated.txt';
/** A git config that runs a program at the next `git status`. */
export const FSMON = "printf '[core]\\n\\tfsmonitor = touch /tmp/pwned\\n'";
