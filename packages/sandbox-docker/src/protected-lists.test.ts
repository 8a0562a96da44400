import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { protectedLists } from '@aalis/api-reach';
import { describe, expect, it } from 'vitest';
import { engineSkip, policy, TEST_IMAGE, tempDir } from '../test/engine.js';
import { DockerSandbox } from './docker-sandbox.js';

describe.skipIf(engineSkip)("api-reach's real protected lists in a real container", () => {
  it('hides .env and credentials, keeps landings and the control plane read-only, lets the workspace be written', async () => {
    const home = tempDir('aalis-home-');
    const data = join(home, '.aalis');
    const ws = join(data, 'workspace');
    const tmp = join(data, 'tmp', 'session-1');
    for (const dir of [join(ws, '.git', 'hooks'), join(ws, '.vscode'), tmp, join(data, 'plugins'), join(home, '.ssh')]) mkdirSync(dir, { recursive: true });
    writeFileSync(join(ws, '.env'), 'TOKEN=hunter2');
    writeFileSync(join(ws, '.env.example'), 'TOKEN=');
    writeFileSync(join(ws, '.git', 'config'), '[core]\n');
    writeFileSync(join(data, 'plugins', 'state.json'), '{}');
    writeFileSync(join(home, '.ssh', 'id_ed25519'), 'PRIVATE');
    const lists = protectedLists({
      paths: {
        install: join(home, 'aalis'),
        data,
        workspace: ws,
        tmp: join(data, 'tmp'),
        self: join(data, 'self'),
        logs: join(data, 'logs'),
        config: join(data, 'config.yaml'),
        secrets: join(data, 'secrets.yaml'),
        deployment: home,
      },
      userHome: home,
      platform: 'linux',
      form: 'source',
      codeDirs: [],
    });
    const box = new DockerSandbox({ images: { stdio: TEST_IMAGE }, instance: 'test-lists', owner: { uid: 0, gid: 0 } });
    const script = [
      'cat .env; cat .env.example',
      'echo x >> .git/config',
      'echo y > .vscode/tasks.json',
      'echo z > .envrc',
      'echo ok > src.txt',
      `ls ${data}/plugins; cat ${home}/.ssh/id_ed25519`,
      'echo done',
    ].join('; ');
    const result = await box.run({
      argv: ['sh', '-c', script],
      cwd: ws,
      env: {},
      timeoutMs: 20_000,
      policy: policy({ write: [ws, tmp], readAllowWithin: [tmp], readDeny: lists.denyRead, writeDeny: lists.landing, controlDeny: lists.control, network: 'on' }),
    });
    expect(result.stdout).toBe('TOKEN=done\n');
    expect(result.stdout).not.toMatch(/hunter2|PRIVATE|state\.json/);
    expect(readFileSync(join(ws, '.git', 'config'), 'utf8')).toBe('[core]\n');
    expect(existsSync(join(ws, '.vscode', 'tasks.json'))).toBe(false);
    expect(existsSync(join(ws, '.envrc'))).toBe(false);
    expect(readFileSync(join(ws, 'src.txt'), 'utf8')).toBe('ok\n');
    expect(result.deniedWrites).toEqual(expect.arrayContaining([join(ws, '.git', 'config'), join(ws, '.envrc')]));
  });
});
