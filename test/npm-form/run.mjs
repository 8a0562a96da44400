#!/usr/bin/env node
// The npm form, as a new user gets it (issue 15): build, `pnpm pack` every package, install the
// scaffolder from the tarballs, make a project with it whose dependencies are those tarballs,
// `npm install` it (third-party packages come from the registry), `npm start` it, open a
// conversation, run a sandboxed run_command and the example plugin's save_note through the HTTP
// API, stop it. Plain JavaScript on purpose: nothing here may need a TypeScript loader.
// Run by .ci/run; by hand: node test/npm-form/run.mjs (--keep keeps the temp folder).
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = resolve(fileURLToPath(new URL('.', import.meta.url)), '..', '..');
const work = mkdtempSync('/var/tmp/aalis-npm-form-');
const started = performance.now();
const phases = [];
let last = started;
const phase = (name) => {
  const now = performance.now();
  const took = `${name} ${((now - last) / 1000).toFixed(1)} s`;
  phases.push(took);
  last = now;
  console.log(`npm-form: ${took}`);
};
const sh = (cmd, args, cwd, extra = {}) => execFileSync(cmd, args, { cwd, stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8', env: { ...process.env, ...extra } });
function check(ok, what) {
  if (!ok) throw new Error(`npm-form: FAILED: ${what}`);
  console.log(`npm-form: ok: ${what}`);
}

let daemon;
let stderr = '';
try {
  // 1. build (turbo: cached when nothing changed) and pack
  sh(join(repo, 'node_modules', '.bin', 'turbo'), ['run', 'build', '--output-logs=errors-only'], repo);
  phase('build');
  const tarballs = join(work, 'tarballs');
  mkdirSync(tarballs);
  for (const pkg of readdirSync(join(repo, 'packages'))) {
    const manifest = join(repo, 'packages', pkg, 'package.json');
    if (!existsSync(manifest) || JSON.parse(readFileSync(manifest, 'utf8')).private) continue;
    sh('pnpm', ['pack', '--pack-destination', tarballs], join(repo, 'packages', pkg));
  }
  const packed = readdirSync(tarballs);
  phase(`pack (${packed.length} packages)`);
  for (const file of packed) {
    const list = sh('tar', ['-tzf', join(tarballs, file)], work);
    const pkg = JSON.parse(sh('tar', ['-xzOf', join(tarballs, file), 'package/package.json'], work));
    check(list.includes('package/dist/index.js') && list.includes('package/dist/index.d.ts') && !list.includes('package/src/'), `${file} ships dist/ with types and no src/`);
    check(!JSON.stringify(pkg.exports).includes('aalis-source') && !JSON.stringify(pkg.dependencies ?? {}).includes('workspace:'), `${file}'s exports point at dist/ only, its @aalis dependencies at versions`);
  }

  check(sh('tar', ['-tzf', join(tarballs, 'aalis-cli-0.1.0.tgz')], work).includes('package/DAEMON.md'), 'the cli tarball ships DAEMON.md (the API for adapter authors)');

  // 2. the scaffolder, installed from its tarball (its @aalis dependencies from theirs)
  const tools = join(work, 'scaffolder');
  mkdirSync(tools);
  writeFileSync(join(tools, 'package.json'), '{ "name": "scaffolder", "private": true }\n');
  sh('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', ...packed.map((f) => join(tarballs, f))], tools);
  phase('install create-aalis');
  const user = userInfo().username;
  sh(join(tools, 'node_modules', '.bin', 'create-aalis'), ['my-bot', '--yes', '--tarballs', tarballs, '--owner', `cli:${user}`, '--model-url', 'http://127.0.0.1:9/v1'], work);
  const project = join(work, 'my-bot');
  check(existsSync(join(project, 'plugins', 'notes', 'index.js')), 'create-aalis wrote the project with its example plugin');

  // 3. the project, as its README says
  sh('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error'], project);
  check(!existsSync(join(project, 'node_modules', 'tsx')), 'no TypeScript loader is installed in the project');
  phase('npm install');
  const help = sh(join(project, 'node_modules', '.bin', 'aalis'), ['--help'], project);
  check(help.includes('Usage: aalis <command>'), 'aalis --help runs from node_modules/.bin');
  const serveHelp = sh('npx', ['--no-install', 'aalis', 'serve', '--help'], project);
  check(/\.\/plugins\/notes\s+\S+index\.js/.test(serveHelp), 'aalis serve --help lists the example plugin');
  // aalis exec runs from its single-file bundle (dist/aalis-exec.cjs, with its code cache), which
  // must find this install (the project) from node_modules as dist/main.js does: the install is control plane
  const cliFiles = sh('tar', ['-tzf', join(tarballs, 'aalis-cli-0.1.0.tgz')], work);
  check(cliFiles.includes('package/dist/aalis-exec.cjs') && cliFiles.includes('package/dist/aalis-exec.cjs.cache') && cliFiles.includes('package/bin/exec-loader.mjs'), 'the cli tarball ships the exec bundle, its code cache and its loader');
  // the docker backend's fixes name the engine and image script: it ships, where the fix says it is
  check(existsSync(join(project, 'node_modules', '@aalis', 'sandbox-docker', 'scripts', 'prepare.sh')), 'the sandbox-docker package ships scripts/prepare.sh, which its fix texts name');
  const noImage = spawnSync(join(project, 'node_modules', '.bin', 'aalis'), ['exec', '--backend', 'docker', '--', 'true'], { cwd: project, encoding: 'utf8', env: { ...process.env, AALIS_DOCKER_IMAGE: '' } });
  check(noImage.status === 125 && noImage.stderr.includes('node_modules/@aalis/sandbox-docker/scripts/prepare.sh'), `aalis exec --backend docker without an image exits 125 naming the shipped script (exit ${noImage.status}: ${noImage.stderr.trim().slice(0, 300)})`);
  const execOut = sh(join(project, 'node_modules', '.bin', 'aalis'), ['exec', '--network', 'off', '--', 'sh', '-c', 'echo bundled'], project);
  check(execOut === 'bundled\n', `aalis exec runs a command in the sandbox from node_modules/.bin (${JSON.stringify(execOut)})`);
  const execWrite = spawnSync(join(project, 'node_modules', '.bin', 'aalis'), ['exec', '--boundary', 'deny', '--', 'sh', '-c', 'echo x >> package.json'], { cwd: project, encoding: 'utf8' });
  check(execWrite.status !== 0 && /Read-only file system/.test(execWrite.stderr) && readFileSync(join(project, 'package.json'), 'utf8').trimEnd().endsWith('}'), `aalis exec: the kernel refused a write to the project's package.json (the install, control plane), unchanged (exit ${execWrite.status}: ${execWrite.stderr.trim().slice(0, 300)})`);

  const token = 'npm-form-test-token-0123456789abcdef';
  daemon = spawn('npm', ['start', '--', '--port', '0'], { cwd: project, detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, AALIS_TOKEN: token } });
  daemon.stderr.on('data', (d) => (stderr += d));
  const url = await new Promise((ok, fail) => {
    let out = '';
    const timer = setTimeout(() => fail(new Error(`npm start printed no console line in 90 s:\n${stderr}`)), 90_000);
    daemon.stdout.on('data', (d) => {
      out += d;
      const m = /^console: (http:\/\/[^/]+)\/console/m.exec(out);
      if (m) {
        clearTimeout(timer);
        ok(m[1]);
      }
    });
    daemon.on('exit', (code) => fail(new Error(`npm start exited (${code}):\n${stderr}`)));
  });
  phase('npm start');
  const api = async (method, path, body) => {
    const res = await fetch(`${url}${path}`, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, ...(body ? { body: JSON.stringify(body) } : {}) });
    return { status: res.status, body: await res.json() };
  };
  const who = { platform: 'cli', userId: user };
  const turn = (n) => ({ session: { id: 'npm-form' }, platform: 'cli', speaker: who, authorised: who, inbound: { id: `m${n}` }, category: 'own' });
  const status = await api('GET', '/api/status');
  check(status.body.extensions?.some((e) => e.name === 'notes' && e.state === 'loaded'), `/api/status lists the example plugin as loaded (${JSON.stringify(status.body.extensions)})`);
  check((await api('POST', '/api/turns', { turn: turn(1), message: 'hello' })).status === 200, 'a conversation opened (POST /api/turns)');
  const ran = await api('POST', '/api/tools/call', { tool: 'run_command', params: { command: 'echo sandboxed > made.txt && cat made.txt', network: 'off' }, turn: turn(2) });
  check(ran.body.ok === true && ran.body.value.where === 'sandbox' && ran.body.value.stdout === 'sandboxed\n', `run_command ran in the sandbox (${JSON.stringify(ran.body).slice(0, 300)})`);
  // A write outside the reach is refused outright (boundary deny: no ask waits for a person here).
  check((await api('POST', '/api/sessions/npm-form/settings', { boundary: 'deny' })).status === 200, 'the conversation set to refuse writes outside its reach');
  const target = join(project, 'package.json');
  const escaped = await api('POST', '/api/tools/call', { tool: 'run_command', params: { command: `echo x > ${target}`, network: 'off' }, turn: turn(3) });
  const refused = escaped.body.ok === true && escaped.body.value.exitCode !== 0 && escaped.body.value.refusedWrites?.some((w) => w.path === target);
  check(refused && readFileSync(target, 'utf8').includes('"my-bot"'), `the kernel refused a sandboxed write to the project's package.json, and it is unchanged (${JSON.stringify(escaped.body).slice(0, 300)})`);
  const note = await api('POST', '/api/tools/call', { tool: 'save_note', params: { name: 'first', text: 'from the plugin' }, turn: turn(4) });
  check(note.body.ok === true && readFileSync(note.body.value.path, 'utf8') === 'from the plugin', `the example plugin's save_note wrote through its credential (${JSON.stringify(note.body).slice(0, 300)})`);
  // The console's address: printed without a code to a pipe (a log keeps it); `aalis console` in the
  // project asks the running daemon for one, from node_modules/.bin as a user runs it.
  check(!stderr.includes(token), 'aalis serve printed no token');
  const address = spawnSync(join(project, 'node_modules', '.bin', 'aalis'), ['console'], { cwd: project, encoding: 'utf8' });
  check(address.status === 0 && /^http:\/\/127\.0\.0\.1:\d+\/console#code=[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}\n$/.test(address.stdout), `aalis console printed a one-time console address (exit ${address.status}: ${address.stdout.trim()} ${address.stderr.trim().slice(0, 300)})`);
  phase('API calls');

  // As a service manager stops it: SIGTERM to the process group (npm, its shell, aalis serve).
  const group = daemon.pid;
  process.kill(-group, 'SIGTERM');
  let left = true;
  for (let i = 0; i < 150 && left; i++) {
    await new Promise((r) => setTimeout(r, 100));
    try {
      process.kill(-group, 0);
    } catch {
      left = false;
    }
  }
  daemon = undefined;
  check(!left && /SIGTERM received/.test(stderr) && !/did not finish cleanly/.test(stderr), `aalis serve stopped cleanly on SIGTERM, nothing left running (processes left: ${left})`);
  phase('stop');
  console.log(`npm-form: PASSED in ${((performance.now() - started) / 1000).toFixed(1)} s (${phases.join(', ')})`);
} catch (error) {
  console.error(error instanceof Error ? error.message : String(error));
  process.exitCode = 1;
} finally {
  if (daemon) {
    try {
      process.kill(-daemon.pid, 'SIGKILL');
    } catch {}
    daemon.stdout.destroy();
    daemon.stderr.destroy();
  }
  if (!process.argv.includes('--keep')) rmSync(work, { recursive: true, force: true });
  else console.log(`npm-form: kept ${work}`);
}
