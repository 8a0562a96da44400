// The real `aalis` binary in real sandboxes (bubblewrap), with real terminal prompts through a
// pseudo-terminal. Workspaces live under /var/tmp: the sandbox gives commands a private /tmp.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { TEST_SCRATCH } from '../../../test/scratch.js';

// the CLI from source (scripts/source.mjs): the tests run without a build
const bin = join(import.meta.dirname, '..', 'scripts', 'source.mjs');
const pty = join(import.meta.dirname, 'fixtures', 'pty-answer.py');
const root = realpathSync(mkdtempSync(join(TEST_SCRATCH, 'aalis-cli-')));
const data = join(root, 'data');
const workspace = join(root, 'workspace');
const outside = join(root, 'outside');
mkdirSync(workspace);
mkdirSync(outside);
afterAll(() => rmSync(root, { recursive: true, force: true }));

function aalis(args: string[], options: { cwd?: string; env?: Record<string, string> } = {}) {
  const result = spawnSync(process.execPath, [bin, ...args], {
    cwd: options.cwd ?? workspace,
    env: { ...process.env, AALIS_DATA: data, ...options.env },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 120_000,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('aalis', () => {
  it('--help lists the commands; an unknown command is a clear error', () => {
    const help = aalis(['--help']);
    expect(help.status).toBe(0);
    for (const command of ['exec', 'explain', 'policy', 'doctor', 'serve']) expect(help.stdout).toContain(command);
    const unknown = aalis(['frobnicate']);
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toContain("unknown command 'frobnicate'. The commands are: exec, explain");
  });

  it.each([
    [['exec', '--tier', 'root', '--', 'true'], "--tier 'root' is not accepted; use one of: readonly, confirm, workspace, full, read-only"],
    [['exec', '--colour', '--', 'true'], "Unknown option '--colour'"],
    [['exec'], 'no command given'],
    [['explain', 'delete', 'x'], "('delete' is none of them)"],
  ])('%j is refused with what is accepted', (args, message) => {
    const result = aalis(args);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain(message);
  });

  it('every command answers --help', () => {
    for (const command of ['exec', 'explain', 'policy', 'doctor']) {
      const result = aalis([command, '--help']);
      expect(result.status).toBe(0);
      expect(result.stdout).toMatch(new RegExp(`^aalis ${command}:`));
    }
  });
});

describe('aalis exec', () => {
  it("runs in the sandbox and exits with the command's own status", () => {
    const result = aalis(['exec', '--', 'sh', '-c', 'echo made > in-workspace.txt; echo out; exit 7']);
    expect(result.status).toBe(7);
    expect(result.stdout).toBe('out\n');
    expect(readFileSync(join(workspace, 'in-workspace.txt'), 'utf8')).toBe('made\n');
  }, 60_000);

  it("leaves no empty session temp under <data>/tmp (one per run, never met again); what the command wrote there is kept", () => {
    const own = join(root, 'data-session-tmp');
    const tmpOf = () => (existsSync(join(own, 'tmp')) ? readdirSync(join(own, 'tmp')) : []);
    for (const args of [['exec', '--', 'true'], ['exec', '--', 'sh', '-c', 'echo "$TMPDIR" >&2'], ['explain', 'read', workspace], ['policy']]) {
      const result = aalis(args, { env: { AALIS_DATA: own } });
      expect({ args, status: result.status, stderr: result.stderr }).toMatchObject({ status: 0 });
      expect({ args, left: tmpOf() }).toEqual({ args, left: [] });
    }
    const kept = aalis(['exec', '--', 'sh', '-c', 'echo kept > "$TMPDIR/note"'], { env: { AALIS_DATA: own } });
    expect(kept.status).toBe(0);
    const left = tmpOf(); // the session temp's shard (tmp/<2 hex>/session-…)
    expect(left).toHaveLength(1);
    const temps = readdirSync(join(own, 'tmp', left[0]!));
    expect(temps).toHaveLength(1);
    expect(readFileSync(join(own, 'tmp', left[0]!, temps[0]!, 'note'), 'utf8')).toBe('kept\n');
  }, 120_000);

  it("gives the command this terminal's environment without starting a login shell", () => {
    // $SHELL is a "login shell" that leaves a mark and adds a variable: exec must use neither
    const marker = join(root, 'login-shell-ran');
    const shell = join(root, 'login-shell.sh');
    writeFileSync(shell, `#!/bin/sh\n: > '${marker}'\nFROM_LOGIN_SHELL=1 exec env -0\n`, { mode: 0o755 });
    const result = aalis(['exec', '--', 'sh', '-c', 'echo "$TERMINAL_VAR:$FROM_LOGIN_SHELL"'], { env: { SHELL: shell, TERMINAL_VAR: 'terminal' } });
    expect(result.status).toBe(0);
    expect(result.stdout).toBe('terminal:\n');
    expect(existsSync(marker)).toBe(false);
  }, 60_000);

  it('output into a pipe whose reader went away ends quietly, with no stack trace', () => {
    const result = spawnSync('sh', ['-c', `"${process.execPath}" "${bin}" exec -- seq 1 200000 | head -1`], {
      cwd: workspace,
      env: { ...process.env, AALIS_DATA: data },
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(result.stdout).toBe('1\n');
    expect(result.stderr).not.toMatch(/EPIPE|node:events|\n\s+at /);
  }, 60_000);

  it('a write outside the workspace is refused by the kernel when nobody can be asked', () => {
    const target = join(outside, 'refused.txt');
    const result = aalis(['exec', '--', 'sh', '-c', `echo x > ${target}`]);
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain('Read-only file system');
    expect(result.stderr).toContain('no terminal to ask on');
    expect(existsSync(target)).toBe(false);
  }, 60_000);

  // Run in a deployment directory, the daemon's config, plugins and tools are its control plane
  // here too: a sandboxed command added an owner to aalis.config.json and planted a spec tool,
  // and explain called those writes allowed, where the daemon refused them.
  it("in a deployment directory, the config, plugins and tools are control plane: refused, never asked, and explain says so", () => {
    const project = join(root, 'project');
    mkdirSync(join(project, 'plugins', 'notes'), { recursive: true });
    mkdirSync(join(project, 'my-tools'));
    const config = JSON.stringify({ owners: { cli: ['root'] }, tools: { dir: 'my-tools' }, plugins: { './plugins/notes': {} } });
    writeFileSync(join(project, 'aalis.config.json'), config);
    writeFileSync(join(project, 'plugins', 'notes', 'index.js'), 'export default {};\n');
    const script = 'echo "{}" > aalis.config.json; echo x >> plugins/notes/index.js; mkdir -p my-tools/evil && echo "{}" > my-tools/evil/tool.json; echo kept > notes.txt';
    const result = aalis(['exec', '--', 'sh', '-c', script], { cwd: project });
    expect(result.status).not.toBe(0);
    expect(readFileSync(join(project, 'aalis.config.json'), 'utf8')).toBe(config);
    expect(readFileSync(join(project, 'plugins', 'notes', 'index.js'), 'utf8')).toBe('export default {};\n');
    expect(existsSync(join(project, 'my-tools', 'evil'))).toBe(false);
    expect(readFileSync(join(project, 'notes.txt'), 'utf8')).toBe('kept\n');
    expect(result.stderr).toContain('(rule: control-plane)');
    for (const path of ['aalis.config.json', 'plugins/notes/index.js', 'my-tools/x/tool.json', 'tools/x/tool.json']) {
      expect(aalis(['explain', 'write', path], { cwd: project }).stdout, path).toContain('deny (rule: control-plane)');
    }
  }, 120_000);

  // explain judged by the policy alone, which names none of the landings only the host tells: it
  // said "allow" for a nested repository's hook and for what an .envrc loads, which the host tools
  // refuse and the sandbox's commit leaves out (issue 13: explain answers from the same code)
  it('explain says a landing only the host tells is refused: a nested repository\'s hooks path, what an .envrc loads', () => {
    const project = join(root, 'project-told');
    mkdirSync(join(project, 'sub', '.git'), { recursive: true });
    writeFileSync(join(project, 'sub', '.git', 'config'), '[core]\n\thooksPath = .githooks\n');
    mkdirSync(join(project, 'tools'));
    writeFileSync(join(project, 'tools', '.envrc'), 'PATH_add bin\n');
    const hook = aalis(['explain', 'write', 'sub/.githooks/pre-commit'], { cwd: project });
    expect(hook.stdout).toContain('deny (rule: landing, read from the host');
    expect(hook.stdout).toContain('is what git runs or reads as configuration in a repository nested in the main directory');
    const bin = JSON.parse(aalis(['explain', 'write', 'tools/bin/git', '--json'], { cwd: project }).stdout) as { hostLanding: string | null };
    expect(bin.hostLanding).toContain('is run by direnv at the next cd there and it loads');
    // an ordinary file stays the workspace's
    expect(aalis(['explain', 'write', 'sub/src/a.txt'], { cwd: project }).stdout).toContain('verdict:  allow');
  }, 60_000);

  // A plugin whose entry is in dist/: its package.json chooses the entry, and was writable when
  // only the entry's directory was protected (the daemon then ran a planted file as root).
  it("a path-named plugin's whole directory is control plane, its package.json included", () => {
    const project = join(root, 'project-dist');
    mkdirSync(join(project, 'myplugin', 'dist'), { recursive: true });
    writeFileSync(join(project, 'aalis.config.json'), JSON.stringify({ plugins: { './myplugin': {} } }));
    const pkg = JSON.stringify({ name: 'myplugin', type: 'module', main: 'dist/index.js' });
    writeFileSync(join(project, 'myplugin', 'package.json'), pkg);
    writeFileSync(join(project, 'myplugin', 'dist', 'index.js'), 'export default {};\n');
    const result = aalis(['exec', '--', 'sh', '-c', 'sed -i "s#dist/index.js#evil.js#" myplugin/package.json; echo x > myplugin/evil.js'], { cwd: project });
    expect(result.status).not.toBe(0);
    expect(readFileSync(join(project, 'myplugin', 'package.json'), 'utf8')).toBe(pkg);
    expect(existsSync(join(project, 'myplugin', 'evil.js'))).toBe(false);
    for (const path of ['myplugin/package.json', 'myplugin/evil.js', 'myplugin/dist/index.js']) {
      expect(aalis(['explain', 'write', path], { cwd: project }).stdout, path).toContain('deny (rule: control-plane)');
    }
  }, 120_000);

  // The sandboxed command names the file: \r and ESC[2K in its name rewrote the ask's line on the
  // terminal, so the ask could show another path than the one it was for.
  it("an ask shows a name's control characters as escapes, never as terminal commands", () => {
    const result = aalis(['exec', '--', 'sh', '-c', `echo x > "${outside}/$(printf 'real\\033[2K\\rshown')"`]);
    expect(result.status).not.toBe(0);
    expect(result.stderr).toMatch(/approval needed[^\n]*\n {2}[^\n]*real\\x1b\[2K\\x0dshown/);
    // only the command's own output carries them (its stderr is passed on as it is)
    expect(result.stderr.split('\n').filter((line) => line.includes('\x1b'))).toEqual([expect.stringMatching(/^sh: /)]);
  }, 60_000);

  // A newline in the command read as a space in the one-line summary: `echo …  # not run: touch x`
  // hid a second line that ran on approval (found by an attack on the console's card).
  it('a host command is asked with each of its lines shown on its own line, whole', () => {
    const result = aalis(['exec', '--tier', 'confirm', '--', 'sh', '-c', `echo "${'done. '.repeat(80)}"  # not run: touch hidden\ntouch hidden`]);
    expect(result.status).not.toBe(0);
    expect(result.stderr).toMatch(/run on the host, outside the sandbox, the command:\n {4}│ sh -c .*done\. done\. done\.[^\n]*# not run: touch hidden\n {4}│ touch hidden/);
    expect(existsSync(join(workspace, 'hidden'))).toBe(false);
  }, 60_000);

  // A command whose workspace was the home directory could write the daemon registry (every aalis
  // command reads it to keep each daemon's data from sandboxed commands) and the undone folder
  // (where a commit keeps conflicting files, by path): both are the daemon's state (found by an attack).
  it('the state folder (daemon registry, undone folder) is control plane and hidden, even with the home as the workspace', () => {
    const home = join(root, 'home-as-workspace');
    const state = join(home, '.local', 'state', 'aalis');
    mkdirSync(join(state, 'undone'), { recursive: true });
    writeFileSync(join(state, 'undone', 'kept.txt'), 'another run kept this\n');
    const env = { HOME: home, XDG_STATE_HOME: '' };
    const script = 'cat .local/state/aalis/undone/kept.txt; mkdir -p .local/state/aalis/daemons; echo {} > .local/state/aalis/daemons/evil.json';
    const result = aalis(['exec', '--boundary', 'deny', '--', 'sh', '-c', script], { cwd: home, env });
    expect(result.status).not.toBe(0);
    expect(result.stdout).not.toContain('another run kept this');
    expect(existsSync(join(state, 'daemons', 'evil.json'))).toBe(false);
    expect(aalis(['explain', 'write', join(state, 'daemons', 'x.json')], { cwd: home, env }).stdout).toContain('deny (rule: control-plane)');
    expect(aalis(['explain', 'read', join(state, 'undone', 'kept.txt')], { cwd: home, env }).stdout).toContain('deny');
  }, 60_000);

  it('a write no grant can lift (a .env file) is never asked, the command runs once, and exec says so and fails', () => {
    const result = aalis(['exec', '--', 'sh', '-c', 'echo run >> once.txt; echo A=1 > .env.local; true']);
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/secret-file.*not run again/s);
    expect(result.stderr).not.toContain('approval needed');
    expect(readFileSync(join(workspace, 'once.txt'), 'utf8')).toBe('run\n');
    expect(existsSync(join(workspace, '.env.local'))).toBe(false);
  }, 60_000);

  it('the same write approved at the terminal prompt runs again with the grant and the file is there', () => {
    const target = join(outside, 'approved.txt');
    const result = spawnSync('python3', [pty, process.execPath, bin, 'exec', '--', 'sh', '-c', `echo approved > ${target}`], {
      cwd: workspace,
      env: { ...process.env, AALIS_DATA: data, ANSWER: 'o' },
      encoding: 'utf8',
      timeout: 120_000,
    });
    // The file does not exist yet, so the ask is for the directory it is to be made in, and says for what.
    expect(result.stdout).toContain(`writing in ${outside}, to make ${target} there`);
    expect(result.stdout).toContain('asked because it is outside the roots');
    expect(result.stdout).toContain('[o] approve once  [r] remember for this session  [n] reject');
    expect(result.status).toBe(0);
    expect(readFileSync(target, 'utf8')).toBe('approved\n');
  }, 120_000);

  it('--tier confirm: the terminal prompt names the command and its directory, and offers no remember', () => {
    const result = spawnSync('python3', [pty, process.execPath, bin, 'exec', '--tier', 'confirm', '--', 'sh', '-c', 'echo on-the-host'], {
      cwd: workspace,
      env: { ...process.env, AALIS_DATA: data, ANSWER: 'o' },
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(result.stdout).toContain(`running \`sh -c 'echo on-the-host'\` in ${workspace} on the host (outside the sandbox)`);
    expect(result.stdout).toContain('asked every time; it cannot be remembered');
    expect(result.stdout).toContain('[o] approve once  [n] reject');
    expect(result.stdout).not.toContain('[r] remember');
    expect(result.stdout).toContain('on-the-host');
    expect(result.status).toBe(0);
  }, 120_000);

  it('rejecting at the prompt writes nothing', () => {
    const target = join(outside, 'rejected.txt');
    const result = spawnSync('python3', [pty, process.execPath, bin, 'exec', '--', 'sh', '-c', `echo no > ${target}`], {
      cwd: workspace,
      env: { ...process.env, AALIS_DATA: data, ANSWER: 'n' },
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(result.status).not.toBe(0);
    expect(result.stdout).toContain('rejected at the terminal');
    expect(existsSync(target)).toBe(false);
  }, 120_000);

  // Node decodes argv and the cwd as UTF-8, with U+FFFD for each byte that is not: --allow-write
  // 'out\xff' named the directory 'out\uFFFD', another one, which was then granted and written.
  it('a path option or a current directory whose bytes are not UTF-8 is refused, nothing run, not taken for another directory', () => {
    const base = mkdtempSync(join(workspace, 'lossy-'));
    mkdirSync(join(base, 'out\uFFFD'));
    mkdirSync(Buffer.from(`${base}/out\xff`, 'latin1'));
    const run = (script: string) =>
      spawnSync('sh', ['-c', script, 'sh', process.execPath, bin], { cwd: base, env: { ...process.env, AALIS_DATA: data }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000 });
    const given = run(`exec "$1" "$2" exec --allow-write "$(printf 'out\\377')" -- touch "${base}/out\uFFFD/written"`);
    expect(given.stderr).toMatch(/--allow-write: the argument .* is not UTF-8/);
    expect(given.stderr).not.toMatch(/\n\s+at /);
    expect(given.status).toBe(2);
    expect(existsSync(join(base, 'out\uFFFD', 'written'))).toBe(false);
    const here = run(`cd "$(printf 'out\\377')" && exec "$1" "$2" exec -- true`);
    expect(here.stderr).toMatch(/the current directory is not UTF-8/);
    expect(here.status).toBe(2);
    // the command's own arguments: node would hand on U+FFFD, another name than the one given
    const arg = run(`exec "$1" "$2" exec -- touch "$(printf '${base}/out\\377/made')"`);
    expect(arg.stderr).toMatch(/the command's argument 2 .* is not UTF-8/);
    expect(arg.status).toBe(2);
    expect(existsSync(join(base, 'out\uFFFD', 'made'))).toBe(false);
    expect(existsSync(Buffer.from(`${base}/out\xff/made`, 'latin1'))).toBe(false);
    const lossyData = run(`exec "$1" "$2" exec --data "$(printf '${base}/d\\377')" -- true`);
    expect(lossyData.stderr).toMatch(/--data: the argument .* is not UTF-8/);
    expect(lossyData.status).toBe(2);
  });

  it('exits 125 and runs nothing when the chosen sandbox cannot start', () => {
    const marker = join(workspace, 'docker-ran.txt');
    const result = aalis(['exec', '--backend', 'docker', '--', 'sh', '-c', `touch ${marker}`], { env: { AALIS_DOCKER_IMAGE: '' } });
    expect(result.status).toBe(125);
    expect(result.stderr).toMatch(/the sandbox cannot start, so the command did not run: .*no image is configured.*AALIS_DOCKER_IMAGE/s);
    expect(existsSync(marker)).toBe(false);
    const darwin = aalis(['exec', '--backend', 'darwin', '--', 'sh', '-c', `touch ${marker}`]);
    expect(darwin.status).toBe(125);
    expect(darwin.stderr).toContain('Seatbelt exists only on macOS');
    expect(existsSync(marker)).toBe(false);
  }, 60_000);
});

describe('aalis explain', () => {
  it('names the landing for .git/hooks/pre-commit', () => {
    const result = aalis(['explain', 'write', '.git/hooks/pre-commit']);
    expect(result.status).toBe(0);
    expect(result.stdout).toContain('verdict:  ask (landing)');
    expect(result.stdout).toContain('source:   persistence and auto-execution landing');
    expect(result.stdout).toMatch(/matched: {2}pattern .*hooks/);
  }, 60_000);

  it('says the control plane and the deny-read list cannot be requested, as JSON for tools', () => {
    const config = aalis(['explain', 'write', join(data, 'config.yaml'), '--json']);
    const parsed = JSON.parse(config.stdout) as { decision: unknown; match: { source: string }; advice: string };
    expect(parsed.decision).toEqual({ verdict: 'deny', rule: 'control-plane' });
    expect(parsed.match.source).toBe('host control plane');
    expect(parsed.advice).toContain('cannot be requested');
    const env = JSON.parse(aalis(['explain', 'read', '.env', '--json']).stdout) as { decision: unknown };
    expect(env.decision).toEqual({ verdict: 'deny', rule: 'deny-read' });
  }, 60_000);

  it('explains exec per tier', () => {
    expect(aalis(['explain', 'exec', '--tier', 'confirm']).stdout).toContain('verdict:  ask (tier)');
    expect(aalis(['explain', 'exec', '--tier', 'workspace']).stdout).toContain('verdict:  allow');
  }, 60_000);
});

describe('aalis doctor and policy', () => {
  it('doctor reports bubblewrap working here and exits 0 for the linux backend', () => {
    const result = aalis(['doctor']);
    expect(result.stdout).toContain('linux (configured): works');
    expect(result.stdout).toMatch(/ok {3}bubblewrap: .*bubblewrap/);
    expect(result.stdout).toContain('darwin: not available');
    expect(result.status).toBe(0);
    expect(aalis(['doctor', '--backend', 'darwin']).status).toBe(1);
  }, 60_000);

  it('doctor says when spec tools in container profiles would be refused (no engine at DOCKER_HOST), and when they are off', () => {
    const gone = aalis(['doctor'], { env: { DOCKER_HOST: 'unix:///nonexistent/aalis-doctor.sock' } });
    expect(gone.stdout).toMatch(/spec tools \(002\): FAIL tools in profiles stdio, network and builder are refused and do not run \(fail closed\): engine: /);
    const dir = mkdtempSync(join(tmpdir(), 'aalis-doctor-'));
    writeFileSync(join(dir, 'aalis.config.json'), JSON.stringify({ tools: { engine: 'off' } }));
    expect(aalis(['doctor'], { cwd: dir }).stdout).toContain('spec tools (002): FAIL tools.engine is "off"');
  }, 60_000);

  it('doctor shows the landings it reads from the machine: the XDG directories set, and what the .envrc files above load', () => {
    const dir = mkdtempSync(join(tmpdir(), 'aalis-doctor-'));
    const ws = join(dir, 'project');
    mkdirSync(ws);
    writeFileSync(join(dir, '.envrc'), 'PATH_add tools\ndotenv "$ENV_FILE"\n');
    const result = aalis(['doctor'], { cwd: ws, env: { XDG_CONFIG_HOME: join(dir, 'dotfiles') } });
    expect(result.stdout).toContain(`XDG_CONFIG_HOME: ${join(dir, 'dotfiles')}; the table's entries under`);
    expect(result.stdout).toMatch(/XDG_CACHE_HOME: not set, so .*\.cache/);
    expect(result.stdout).toContain(`${join(dir, '.envrc')}: loads ${join(dir, 'tools')} (landings)`);
    expect(result.stdout).toContain('and what cannot be told here (dotenv $ENV_FILE)');
    const json = JSON.parse(aalis(['doctor', '--json'], { cwd: ws, env: { XDG_CONFIG_HOME: join(dir, 'dotfiles') } }).stdout) as { hostLandings: { xdg: { kind: string; set: string[] | null }[] } };
    expect(json.hostLandings.xdg.find((x) => x.kind === 'config')?.set).toContain(join(dir, 'dotfiles'));
  }, 60_000);

  it('policy prints the layers and the whole bubblewrap command line (namespaces, capability drop, seccomp fd)', () => {
    const result = aalis(['policy', '--tier', 'readonly']);
    expect(result.status).toBe(0);
    expect(result.stdout).toContain('Sandbox policy (tier readonly)');
    expect(result.stdout).toContain('network: off');
    expect(result.stdout).toMatch(/bwrap --unshare-user .*--cap-drop ALL .*--disable-userns .*--(ro-)?bind \/ \/ .*--seccomp 3 -- CMD\.\.\./);
    // `--bind / /` only where the root map's step makes the host read-only first, and says so
    if (!/--ro-bind \/ \/ /.test(result.stdout)) expect(result.stdout).toContain('read-only host');
    expect(aalis(['policy', '--tier', 'full']).stderr).toContain('runs commands on the host, so it has no sandbox policy');
  }, 60_000);

  // bwrap and unshare on PATH are recorders that write down their argv and exec the real ones:
  // what `aalis exec` really started is compared with what `aalis policy` printed. Run as root,
  // bwrap starts from the root map's step, where the host is read-only but for the writable roots:
  // the workspace tier's recorder writes in the workspace (a write of the run, committed with it);
  // the readonly tier has none, so there bwrap makes the host read-only, as before (AALIS_STEP_READ_ONLY=off).
  it.each(['readonly', 'workspace'])('policy --tier %s prints exactly the command line aalis exec starts', (tier) => {
    const rec = join(root, `rec-${tier}`);
    const log = tier === 'workspace' ? join(workspace, `.rec-log-${tier}`) : join(rec, 'log');
    mkdirSync(rec, { recursive: true });
    mkdirSync(log, { recursive: true });
    for (const name of ['bwrap', 'unshare']) {
      const real = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).stdout.trim();
      // the argv, and beside it the environment the program was started with
      // bwrap reads the command's own environment on fd 7 (sandbox-linux launch-env.ts): kept, then handed on
      const fd7 = name === 'bwrap' ? `if [ -e /proc/self/fd/7 ]; then cat <&7 > "$f.fd7"; exec ${real} "$@" 7<"$f.fd7"; fi\n` : '';
      writeFileSync(join(rec, name), `#!/bin/sh\nf=$(mktemp ${log}/${name}.XXXXXX)\nenv -0 > "$f.env"\nprintf '%s\\0' "$0" "$@" > "$f"\n${fd7}exec ${real} "$@"\n`, { mode: 0o755 });
    }
    // a registry of its own: the daemons other tests start and stop meanwhile are hidden in every
    // sandbox (daemon-registry.ts), so a shared registry would change the plan between its two prints
    const env = { PATH: `${rec}:${process.env.PATH}`, XDG_STATE_HOME: join(rec, 'state'), ...(tier === 'workspace' ? {} : { AALIS_STEP_READ_ONLY: 'off' }) };
    // a root daemon's plan starts with the root map's python3 (sandbox-linux root-map.ts), which
    // cannot be a recorder: compared from the first recorded program on, the map's step is in the plan
    const firstRecorded = (plan: { argv: string[] }) => plan.argv.findIndex((a) => a.startsWith(`${rec}/`));
    const planNow = () => {
      const printed = aalis(['policy', '--tier', tier, '--json'], { env });
      expect(printed.status).toBe(0);
      return JSON.parse(printed.stdout).plan as { argv: string[]; env: Record<string, string>; pre: { step: string; detail: string }[] };
    };
    // a plan is of the host as it is then, and other processes on this machine make and remove
    // aalis data directories (hidden in every sandbox): the run must equal the plan before or after it
    const before = planNow();
    const ran = aalis(['exec', '--tier', tier, '--', '/bin/echo', `mark-${tier}`], { env });
    expect(ran.stdout).toContain(`mark-${tier}`);
    const after = planNow();
    const records = readdirSync(log)
      .filter((f) => !f.endsWith('.env') && !f.endsWith('.fd7'))
      .map((f) => join(log, f))
      .sort((a, b) => statSync(a).mtimeMs - statSync(b).mtimeMs)
      .map((f) => ({
        argv: readFileSync(f, 'utf8').split('\0').slice(0, -1),
        env: readFileSync(`${f}.env`, 'utf8').split('\0').slice(0, -1),
        commandEnv: existsSync(`${f}.fd7`) ? readFileSync(`${f}.fd7`, 'utf8').split('\0').slice(0, -1) : [],
      }))
      .filter(({ argv }) => argv.includes(`mark-${tier}`) && argv[0] === before.argv[firstRecorded(before)]);
    expect(records).toHaveLength(1);
    const starts = records.map((r) => r.argv);
    // each CLI process is its own session, with its own session temp; the run's directory is named as it starts
    const session = (a: string) => a.replace(/[0-9a-f]{2}\/session-[0-9a-f]+/g, '<shard>/session-<id>');
    const started = starts[0]!.map((a) => session(a.replace(/\/[^\0]*?\/aalis-sbx-\d+-\d+-[a-z0-9]+/g, '<run>')));
    const planned = (plan: { argv: string[] }) => [...plan.argv.slice(firstRecorded(plan), -1).map(session), '/bin/echo', `mark-${tier}`];
    if (JSON.stringify(started) !== JSON.stringify(planned(before))) expect(started).toEqual(planned(after));
    // the environment bwrap was started with is the plan's fixed launch environment (less what the
    // recording shell itself sets), and the command's own, read by bwrap on fd 7, has the variables
    // the plan names (the policy is built from the same credential by the same function)
    const shellOwn = new Set(['PWD', 'OLDPWD', 'SHLVL', '_']);
    const envOf = (pairs: readonly string[]) => Object.fromEntries(pairs.map((kv) => [kv.slice(0, kv.indexOf('=')), session(kv.slice(kv.indexOf('=') + 1))]).filter(([k]) => !shellOwn.has(k as string)));
    const plannedEnv = (plan: { env: Record<string, string> }) => envOf(Object.entries(plan.env).map(([k, v]) => `${k}=${v}`));
    expect(envOf(records[0]!.env)).toEqual(plannedEnv(before));
    const setenv = records[0]!.commandEnv;
    const commandNames = setenv.filter((_, i) => i % 3 === 1).sort();
    expect(setenv.filter((_, i) => i % 3 === 0).every((a) => a === '--setenv')).toBe(true);
    expect(commandNames.length).toBeGreaterThan(3);
    const namedIn = (plan: { pre: { step: string; detail: string }[] }) => plan.pre.find((p) => p.step === 'environment')!.detail.split('from fd 7): ')[1]!.split(', ').sort();
    if (!isDeepStrictEqual(commandNames, namedIn(before))) expect(commandNames).toEqual(namedIn(after));
  }, 300_000);
});
