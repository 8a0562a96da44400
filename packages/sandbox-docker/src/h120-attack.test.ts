
import { appendFileSync, existsSync, linkSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { engineSkip, TEST_IMAGE } from '../test/engine.js';
import { checkAsNobody } from '../test/check-as-nobody.js';
import { FSMON, git, gitTakesForRepo, HOOK, type LandingScene, landingScene, UNRELATED } from '../test/landing-scene.js';
import { DockerSandbox } from './docker-sandbox.js';

/**
 * h120: an attack on the new repository judge (new-repository.ts), the hard-link aliases
 * (protectedAliases), hiddenAt, own-dirs.ts and the walk's names (decodeName). Each test asserts
 * the safe or kind outcome; an `it.fails` is a finding (named in its comment).
 */

const box = new DockerSandbox({ images: { stdio: TEST_IMAGE }, instance: 'test-h120', owner: { uid: 0, gid: 0 } });

const scene = (before?: (ws: string, home: string) => void) => landingScene('aalis-h120-', before);
type Scene = LandingScene;

async function runAny(s: Scene, script: string, timeoutMs = 30_000) {
  return box.run({ argv: ['sh', '-c', script], cwd: s.ws, env: {}, timeoutMs, identity: 'owner', policy: s.policy });
}

/** A shell line that puts the folder `d` under `n` more folders of 200-byte names (past PATH_MAX at about 20), every call on short paths (h116). */
const DEEPEN = (n: number) => `L=$(printf 'a%.0s' $(seq 1 200)); i=0; while [ $i -lt ${n} ]; do mkdir t && mv d t/$L && mv t d || exit 9; i=$((i+1)); done`;


describe.skipIf(engineSkip)('h120: new repositories, hard-link aliases, hiddenAt, own dirs (docker backend)', { timeout: 120_000 }, () => {
  // FINDING h120-C1 (the check walks into the person's masked secrets folder, and deletes from it):
  // plan.hiddenAt is by path. The person's cfg/.env.d (read-denied, masked by a tmpfs at plan time)
  // is carried along when the command renames its parent (`mv cfg cfg2`: a mount point cannot be
  // moved, but a folder holding one can, and the tmpfs moves with it). After the run the check
  // walks cfg2/.env.d (no mask at that path), lists the person's secrets, and removes every entry
  // there a write rule denies as a new write: it was never walked at plan, so its identity was
  // never noted (deniedInodes). The person's .npmrc with its token is deleted.
  it('C1. the person\'s masked cfg/.env.d moved with its parent (mv cfg cfg2): nothing in it is removed', async () => {
    const s = scene((ws) => {
      mkdirSync(join(ws, 'cfg', '.env.d'), { recursive: true });
      writeFileSync(join(ws, 'cfg', '.env.d', 'prod.env'), 'SECRET=1\n');
      writeFileSync(join(ws, 'cfg', '.env.d', '.npmrc'), '//registry.example/:_authToken=SECRET\n');
    });
    const r = await runAny(s, `mv cfg cfg2; ${UNRELATED}`);
    expect(existsSync(join(s.ws, 'cfg2', '.env.d', 'prod.env'))).toBe(true);
    expect(r.deniedWrites).toEqual([]);
    expect(existsSync(join(s.ws, 'cfg2', '.env.d', '.npmrc'))).toBe(true);
  });

  // FINDING h120-C2 (h116-F4 again, by a rename): after `mv cfg cfg2` the command makes a new
  // cfg/.env.d at the path the plan masked; plan.hiddenAt(cfg/.env.d) is still true (maskedDirs,
  // by path), so deniedWritesAfter never descends into it: an .envrc, a nested repository's hook
  // and the bare-repository disguise there all stay, and the run says nothing.
  it('C2. landings written in a new folder at the path of a masked folder moved away (mv cfg cfg2; mkdir cfg/.env.d) are removed', async () => {
    const s = scene((ws) => {
      mkdirSync(join(ws, 'cfg', '.env.d'), { recursive: true });
      writeFileSync(join(ws, 'cfg', '.env.d', 'prod.env'), 'SECRET=1\n');
    });
    const e = 'cfg/.env.d';
    const r = await runAny(
      s,
      `mv cfg cfg2 && mkdir -p ${e}/r/.git/hooks ${e}/r/.git/objects ${e}/r/.git/refs ${e}/b/objects ${e}/b/refs && ${HOOK} > ${e}/r/.git/hooks/pre-commit && chmod +x ${e}/r/.git/hooks/pre-commit && echo 'ref: refs/heads/main' > ${e}/r/.git/HEAD && echo 'ref: refs/heads/main' > ${e}/b/HEAD && ${FSMON} > ${e}/b/config && echo 'PATH_add /tmp/evil' > ${e}/.envrc; ${UNRELATED}`,
    );
    expect(existsSync(join(s.ws, 'unrelated.txt'))).toBe(true);
    expect(existsSync(join(s.ws, e, '.envrc'))).toBe(false);
    expect(gitTakesForRepo(join(s.ws, e, 'b'))).toBe(false);
    expect(existsSync(join(s.ws, e, 'r', '.git', 'hooks', 'pre-commit'))).toBe(false);
    expect(r.writeDenied).toBe(true);
  });

  // FINDING h120-B1 (aliases of pattern-named landings outside the writable roots): protectedAliases
  // notes the files the rules name outside the writable roots by `rulePaths`, path rules only. A
  // landing in the home named by a pattern (~/.vimrc, ~/.emacs.d/init.el, ~/.ipython/.../startup,
  // VS Code's User/settings.json) hard-linked into the workspace (a dotfiles folder kept by hard
  // links) is written through its workspace name: ~/.vimrc gets the command's line, and vim runs it.
  it('B1. ~/.vimrc (a pattern rule) hard-linked into the workspace: a write through the workspace name does not change it', async () => {
    const s = scene((ws, home) => {
      writeFileSync(join(home, '.vimrc'), 'set number\n');
      mkdirSync(join(ws, 'dotfiles'));
      linkSync(join(home, '.vimrc'), join(ws, 'dotfiles', 'vimrc'));
    });
    await runAny(s, `echo '!touch /tmp/pwned' >> dotfiles/vimrc; ${UNRELATED}`);
    expect(existsSync(join(s.ws, 'unrelated.txt'))).toBe(true);
    expect(readFileSync(join(s.home, '.vimrc'), 'utf8')).toBe('set number\n');
  });

  it('B1b. the same for ~/.bashrc (a path rule) holds: its workspace name is mounted read-only', async () => {
    const s = scene((ws, home) => {
      writeFileSync(join(home, '.bashrc'), 'alias ll="ls -l"\n');
      mkdirSync(join(ws, 'dotfiles'));
      linkSync(join(home, '.bashrc'), join(ws, 'dotfiles', 'bashrc'));
    });
    await runAny(s, `echo 'touch /tmp/pwned' >> dotfiles/bashrc; ${UNRELATED}`);
    expect(readFileSync(join(s.home, '.bashrc'), 'utf8')).toBe('alias ll="ls -l"\n');
  });
  // FINDING h120-D1 (past PATH_MAX, a daemon that is not root): a tree the command put past
  // PATH_MAX is removed whole (removeDenied, by descriptors from its parent), but a folder in it
  // closed to writing (chmod 555) stops removeTreeAt, and openUpOwnTree cannot open it again: it
  // opens by path (openUpOwnDir's openSync, readdirSync), and every path below the tree's top is
  // past PATH_MAX (ENAMETOOLONG). The removal fails, the run only says so, and the .envrc stays.
  it('D1. a daemon that is not root: an .envrc in a folder closed to writing (chmod 555) in a tree moved past PATH_MAX is removed', () => {
    const s = scene();
    const after = checkAsNobody(s, `mkdir -p d/x && echo 'PATH_add /tmp/evil' > d/x/.envrc && chmod 555 d/x && ${DEEPEN(22)} && mv d deep`, '.envrc');
    expect(after.denied.length).toBeGreaterThan(0);
    expect(after.left.length, JSON.stringify({ failed: after.failed, notes: after.notes }).slice(0, 600)).toBe(0);
    expect(after.failed).toEqual([]);
  });

  it('D1b. the same closed folder at a short depth is opened and removed (h116-F3c holds)', () => {
    const s = scene();
    const after = checkAsNobody(s, `mkdir -p d/x && echo 'PATH_add /tmp/evil' > d/x/.envrc && chmod 555 d/x`, '.envrc');
    expect(after.left).toEqual([]);
    expect(after.failed).toEqual([]);
  });
  /** A shell line that makes the repository `dir`/.git by hand as `git init` does (the image has no git), its config inert. */
  const NEW_REPO = (dir: string) =>
    `mkdir -p ${dir}/.git/objects/info ${dir}/.git/objects/pack ${dir}/.git/refs/heads ${dir}/.git/refs/tags ${dir}/.git/hooks ${dir}/.git/info && echo 'ref: refs/heads/main' > ${dir}/.git/HEAD && printf '[core]\\n\\trepositoryformatversion = 0\\n\\tfilemode = true\\n\\tbare = false\\n' > ${dir}/.git/config && echo '# sample' > ${dir}/.git/hooks/pre-commit.sample`;

  it('A1. an inert new repository a run made stays, git takes it for one', async () => {
    const s = scene();
    const r = await runAny(s, `${NEW_REPO('n')}; ${UNRELATED}`);
    expect(existsSync(join(s.ws, 'n', '.git', 'HEAD')), r.stderr).toBe(true);
    expect(git(join(s.ws, 'n'), 'rev-parse', '--git-dir').trim()).toBe('.git');
  });

  it('A1b. a new repository with a hook, an unlisted config key, objects/info/alternates or info/attributes: only the first two are refused', async () => {
    const s = scene();
    const r = await runAny(
      s,
      `${NEW_REPO('h')} && ${HOOK} > h/.git/hooks/post-checkout; ${NEW_REPO('c')} && ${FSMON} >> c/.git/config; ${NEW_REPO('a')} && echo /etc > a/.git/objects/info/alternates && echo '* filter=lfs diff=x' > a/.git/info/attributes; ${UNRELATED}`,
    );
    expect(existsSync(join(s.ws, 'h', '.git')), r.stderr).toBe(false);
    expect(existsSync(join(s.ws, 'c', '.git'))).toBe(false);
    // data: alternates and attributes run nothing of the repository's own
    expect(existsSync(join(s.ws, 'a', '.git', 'HEAD'))).toBe(true);
  });

  // FINDING h120-A2 (the policy's own rules are not asked inside a new repository judged inert):
  // deniedWritesAfter stops at a new `.git` (visit returns false) and hands it to the judge, whose
  // idea of a landing is git's defaults; when the judge calls it inert nothing under it is matched
  // against the policy's write denials. plugin-reach turns a relative core.hooksPath of the
  // person's global config into a pattern for every folder (hooksPathLandings' anywherePattern):
  // `core.hooksPath = .git/team-hooks` becomes ^/(?:.*/)?\.git/team-hooks(?:/.*)?$ (the rule below).
  // A command's `n/.git/team-hooks/pre-commit` in a new inert repository stays, and the person's
  // next `git commit` in n runs it (git takes hooksPath from the global config).
  it('A2. a write the policy denies inside a new repository judged inert (a global relative hooksPath .git/team-hooks) is removed', async () => {
    const s = scene();
    const policy = { ...s.policy, writeDeny: [...s.policy.writeDeny, { pattern: '^/(?:.*/)?\\.git/team-hooks(?:/.*)?$' }] };
    const hook = join(s.ws, 'n', '.git', 'team-hooks', 'pre-commit');
    const r = await box.run({
      argv: ['sh', '-c', `${NEW_REPO('n')} && mkdir n/.git/team-hooks && ${HOOK} > n/.git/team-hooks/pre-commit && chmod +x n/.git/team-hooks/pre-commit; ${UNRELATED}`],
      cwd: s.ws,
      env: {},
      timeoutMs: 30_000,
      identity: 'owner',
      policy,
    });
    expect(existsSync(join(s.ws, 'unrelated.txt'))).toBe(true);
    expect(existsSync(hook)).toBe(false);
    expect(r.writeDenied).toBe(true);
  });

  it('A3. a new inert repository whose remote is a bare repository with a hook made in the session tmp: the bare repository does not stay', async () => {
    const s = scene();
    const bare = join(s.tmp, 'evil.git');
    const r = await runAny(
      s,
      `${NEW_REPO('n')} && printf '[remote "origin"]\\n\\turl = ${bare}\\n' >> n/.git/config && mkdir -p ${bare}/objects ${bare}/refs ${bare}/hooks && echo 'ref: refs/heads/main' > ${bare}/HEAD && ${HOOK} > ${bare}/hooks/pre-receive && chmod +x ${bare}/hooks/pre-receive; ${UNRELATED}`,
    );
    expect(existsSync(join(s.ws, 'n', '.git', 'HEAD')), r.stderr).toBe(true);
    expect(gitTakesForRepo(bare)).toBe(false);
  });
  // FINDING h120-E1 (a later landing named by bytes that are not UTF-8 is looked up by the wrong
  // name): the walk and core's readers now name `hk\xff` as `hk\udcff` (decodeName), but
  // writesUnderLaterLandings' scopeEntry lstats that string, and node turns a lone surrogate into
  // U+FFFD's bytes (EF BF BD): it looks at `hk\uFFFD`, finds nothing, and skips the scope. A
  // nested repository whose core.hooksPath is hk\xff, moved by the command (`mv sub sub3`, so its
  // hooks folder is a landing only the check after the run knows), takes the command's hook in
  // sub3/hk\xff; the person's next `git commit` in sub3 runs it.
  it('E1. a moved nested repository whose core.hooksPath is hk\\xff: the command\'s hook there is removed', async () => {
    const s = scene((ws) => {
      git(ws, 'init', '-q', 'sub');
      appendFileSync(join(ws, 'sub', '.git', 'config'), Buffer.concat([Buffer.from('[core]\n\thooksPath = hk'), Buffer.of(0xff), Buffer.from('\n')]));
    });
    const r = await runAny(s, `mv sub sub3 && d="sub3/hk$(printf '\\377')" && mkdir -p "$d" && ${HOOK} > "$d/pre-commit" && chmod +x "$d/pre-commit"; ${UNRELATED}`);
    expect(existsSync(join(s.ws, 'unrelated.txt'))).toBe(true);
    expect(existsSync(join(s.ws, 'sub3', '.git', 'HEAD'))).toBe(true);
    expect(existsSync(Buffer.concat([Buffer.from(join(s.ws, 'sub3', 'hk')), Buffer.of(0xff), Buffer.from('/pre-commit')])), r.stderr).toBe(false);
  });

  it('E1b. the same hook in sub3/hk (UTF-8) is removed (the later landing holds for a text name)', async () => {
    const s = scene((ws) => {
      git(ws, 'init', '-q', 'sub');
      appendFileSync(join(ws, 'sub', '.git', 'config'), '[core]\n\thooksPath = hk\n');
    });
    await runAny(s, `mv sub sub3 && mkdir -p sub3/hk && ${HOOK} > sub3/hk/pre-commit && chmod +x sub3/hk/pre-commit; ${UNRELATED}`);
    expect(existsSync(join(s.ws, 'sub3', 'hk', 'pre-commit'))).toBe(false);
  });
  // FINDING h120-D2 (C1 for a daemon that is not root: the person's closed folder is opened and
  // emptied): the person's cfg/vault, closed to everyone (chmod 000), cannot be listed at plan
  // time, so the plan masks it whole (unlistedDirs). The command moves its parent (mv cfg cfg2);
  // the check after the run meets cfg2/vault by a path hiddenAt does not know, cannot list it, and
  // deniedWritesAfter's openUpOwnDir gives it its owner's bits back (0700, left so), walks the
  // person's private folder and removes what a write rule names there (its .npmrc).
  it('D2. a daemon that is not root: the person\'s closed folder (chmod 000) moved with its parent is neither opened nor emptied', () => {
    const s = scene();
    const after = checkAsNobody(s, 'mv cfg cfg2', '.npmrc', "mkdir -p cfg/vault && echo '//r/:_authToken=SECRET' > cfg/vault/.npmrc && echo k > cfg/vault/key && chmod 000 cfg/vault");
    expect(after.modeOf, JSON.stringify({ denied: after.denied, left: after.left, notes: after.notes }).slice(0, 800)).toBe('0');
    expect(after.denied).toEqual([]);
    expect(after.notes).toEqual([]);
  });

  // A documented limit (docs/threat-model.md: deny-read is by name; a hard link a person made of a
  // secret reads as its other name does), kept as an expected failure.
  // FINDING h120-B2 (reads are still by path): a file the read rules hide (the daemon's own
  // secrets.yaml) with another hard link in the workspace is masked at its own path only; its
  // workspace name is readable in the container (protectedAliases protects other names from
  // writes, not reads), and the command prints the secrets.
  it.fails('B2. ~/.aalis/secrets.yaml hard-linked into the workspace: the container cannot read it through the workspace name', async () => {
    const s = scene((ws, home) => {
      writeFileSync(join(home, '.aalis', 'secrets.yaml'), 'token: SECRET-h120\n');
      mkdirSync(join(ws, 'backup'));
      linkSync(join(home, '.aalis', 'secrets.yaml'), join(ws, 'backup', 'secrets.yaml'));
    });
    expect(s.policy.readDeny.some((r) => 'path' in r && r.path === join(s.home, '.aalis', 'secrets.yaml'))).toBe(true);
    const r = await runAny(s, `cat backup/secrets.yaml; ${UNRELATED}`);
    expect(existsSync(join(s.ws, 'unrelated.txt'))).toBe(true);
    expect(r.stdout).not.toContain('SECRET-h120');
  });
  /** The bytes of `<ws>/sub/hk\xff/<name>`. */
  const rawHook = (ws: string, name: string) => Buffer.concat([Buffer.from(join(ws, 'sub', 'hk')), Buffer.of(0xff), Buffer.from(`/${name}`)]);

  // FINDING h120-E2 (a landing named by bytes that are not UTF-8 gets no mount): the person's
  // nested repository sub has core.hooksPath = hk\xff, and its hook there. Phase two of planMounts
  // (extraScopes → scopeEntry) lstats the rule's path `sub/hk\udcff` as a string, which node
  // sends as `hk\uFFFD`: nothing there, so the folder gets no read-only mount and no identity
  // noted. The container writes the person's hook in place (the command's line in it), and the
  // check after the run, finding a denied file it never noted, removes the person's hook.
  it('E2. the person\'s hook in a nested repository\'s hooksPath hk\\xff: not written by the command, not removed by the check', async () => {
    const s = scene((ws) => {
      git(ws, 'init', '-q', 'sub');
      appendFileSync(join(ws, 'sub', '.git', 'config'), Buffer.concat([Buffer.from('[core]\n\thooksPath = hk'), Buffer.of(0xff), Buffer.from('\n')]));
      mkdirSync(rawHook(ws, '').subarray(0, -1));
      writeFileSync(rawHook(ws, 'pre-commit'), '#!/bin/sh\necho lint\n', { mode: 0o755 });
    });
    // seen before: the write succeeded in the container (WROTE), and the check removed the whole
    // sub/hk\xff (the same with a command that only wrote unrelated.txt: every run deleted the
    // person's hooks). Now the landing is found by its bytes, and the docker engine, which takes
    // mount paths only as UTF-8 text, cannot mount it read-only: the run is refused, said
    await expect(runAny(s, `echo 'touch /tmp/pwned' >> "sub/hk$(printf '\\377')/pre-commit" && echo WROTE; ${UNRELATED}`)).rejects.toThrow(/not UTF-8/);
    expect(existsSync(join(s.ws, 'unrelated.txt'))).toBe(false);
    expect(existsSync(rawHook(s.ws, 'pre-commit'))).toBe(true);
    expect(readFileSync(rawHook(s.ws, 'pre-commit'), 'utf8')).toBe('#!/bin/sh\necho lint\n');
  });
  // FINDING h120-D3 (a daemon that is not root: a folder closed to search, not to listing):
  // `chmod 600 q` (read and write, no search bit) leaves q listable, so the walk never hands q to
  // openUpOwnDir; q/sub cannot be listed (no search on q), and openUpOwnDir cannot open q/sub
  // either (its O_PATH open needs search on q): q/sub is only said unchecked, and the .envrc in
  // it stays (direnv loads it once q can be entered again: `chmod u+x q`, or an rsync/cp -a of the project).
  it('D3. a daemon that is not root: a new .envrc under a folder the command left searchable by nobody (chmod 600 q) is removed', () => {
    const s = scene();
    const after = checkAsNobody(s, `mkdir -p q/sub && echo 'PATH_add /tmp/evil' > q/sub/.envrc && chmod 600 q`, '.envrc');
    expect(existsSync(join(s.ws, 'q', 'sub', '.envrc')), JSON.stringify({ unlisted: after.unlisted, denied: after.denied }).slice(0, 600)).toBe(false);
    expect(after.unlisted).toEqual([]);
  });
});
