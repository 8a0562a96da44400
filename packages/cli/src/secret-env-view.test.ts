// `aalis doctor` and `aalis policy` show the environment filter of sandboxed commands: the
// rules with their reasons and the config's allow and deny lists; `aalis serve` refuses a bad
// list, naming the field. The real binary, as a user runs it.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ownerTurn, serveOnce, startServe } from './daemon/serve-process.testing.js';
import { TEST_SCRATCH } from '../../../test/scratch.js';

// the CLI from source (scripts/source.mjs): the tests run without a build
const bin = join(import.meta.dirname, '..', 'scripts', 'source.mjs');
const root = realpathSync(mkdtempSync(join(TEST_SCRATCH, 'aalis-secret-env-view-')));
afterAll(() => rmSync(root, { recursive: true, force: true }));
writeFileSync(join(root, 'aalis.config.json'), JSON.stringify({ reach: { env: { allow: ['NPM_TOKEN', 'HF_*'], deny: ['ACME_*'] } } }));

function aalis(args: string[]) {
  const result = spawnSync(process.execPath, [bin, ...args], { cwd: root, env: { ...process.env, AALIS_DATA: join(root, 'data') }, encoding: 'utf8', timeout: 120_000 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('the environment filter, as the CLI shows it', () => {
  it('doctor lists every rule with its reason and the allow and deny lists of the config', () => {
    const result = aalis(['doctor']);
    expect(result.stdout).toMatch(/environment of sandboxed commands: variables matching these are removed/);
    expect(result.stdout).toMatch(/^ {4}\*_TOKEN +an access token/m);
    expect(result.stdout).toMatch(/^ {4}AWS_\* +AWS credentials/m);
    expect(result.stdout).toMatch(/^ {4}AALIS_\* .*\(cannot be allowed\)$/m);
    expect(result.stdout).toContain(`allowed through by the config (${join(root, 'aalis.config.json')}): NPM_TOKEN, HF_*`);
    expect(result.stdout).toContain('removed besides, by the config: ACME_*');
  }, 60_000);

  it('doctor exits 1 with a config it cannot read, saying the daemon will not start with it', () => {
    const bad = join(root, 'unreadable.json');
    writeFileSync(bad, JSON.stringify({ model: 5 }));
    const result = aalis(['doctor', '--config', bad]);
    expect(result.status).toBe(1);
    expect(result.stdout).toMatch(/model: Invalid input: expected object, received number\); the daemon will not start with it/);
    expect(result.stdout).toMatch(/The configured backend \(linux\) works\.\nThe config cannot be read/);
    const json = aalis(['doctor', '--json', '--config', bad]);
    expect(json.status).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: true, configReadable: false });
  }, 60_000);

  it('policy --json carries the same, and a bad config file is a clear error', () => {
    const result = aalis(['policy', '--json']);
    expect(result.status).toBe(0);
    const parsed = JSON.parse(result.stdout) as { environment: { file: string; config: unknown; rules: { pattern: string; reason: string }[] } };
    expect(parsed.environment.config).toEqual({ allow: ['NPM_TOKEN', 'HF_*'], deny: ['ACME_*'] });
    expect(parsed.environment.rules).toContainEqual(expect.objectContaining({ pattern: 'GITHUB_*' }));
    const bad = join(root, 'bad.json');
    writeFileSync(bad, JSON.stringify({ reach: { env: { allow: ['*'] } } }));
    const refused = aalis(['policy', '--config', bad]);
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toMatch(/reach\.env\.allow\.0: '\*' would match every variable/);
    expect(refused.stderr).not.toMatch(/\n\s+at /);
  }, 60_000);

  it('a daemon started with the config applies it to a sandboxed env through the HTTP API', async () => {
    const dir = mkdtempSync(join(root, 'deploy-'));
    writeFileSync(join(dir, 'aalis.config.json'), JSON.stringify({ owners: { chat: ['alice'] }, reach: { env: { allow: ['NPM_TOKEN'] } } }));
    const daemon = await startServe(dir, [], { GITHUB_TOKEN: 'ghp_on-the-daemon', AWS_SECRET_ACCESS_KEY: 'aws-on-the-daemon', NPM_TOKEN: 'npm-allowed' });
    try {
      const result = await daemon.api('POST', '/api/tools/call', { tool: 'run_command', params: { command: 'env' }, turn: ownerTurn('env-check') });
      expect(result.body).toMatchObject({ ok: true, value: { where: 'sandbox', exitCode: 0 } });
      const stdout: string = result.body.value.stdout;
      expect(stdout).toMatch(/^PATH=/m);
      expect(stdout).not.toMatch(/^(GITHUB_TOKEN|AWS_SECRET_ACCESS_KEY)=/m);
      expect(stdout).not.toContain('on-the-daemon');
      expect(stdout).toMatch(/^NPM_TOKEN=npm-allowed$/m);
    } finally {
      await daemon.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 90_000);

  it('serve refuses an allow list entry that is not a name, naming the field', async () => {
    const dir = mkdtempSync(join(root, 'deploy-'));
    writeFileSync(join(dir, 'aalis.config.json'), JSON.stringify({ reach: { env: { allow: ['GITHUB TOKEN'] } } }));
    const result = await serveOnce(['--dir', dir, '--port', '0']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`${join(dir, 'aalis.config.json')}: reach.env.allow.0: 'GITHUB TOKEN' is not a variable name or pattern`);
  }, 60_000);
});
