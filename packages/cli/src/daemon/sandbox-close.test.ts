// The daemon's stop closes its sandbox service (through the kernel's dispose of the sandbox
// plugin): refused writes a run kept aside for an answer do not outlive the daemon. Before, only a
// finished tool call discarded them; a kept layer nobody answered stayed on disk after the stop.
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { reach, sandbox } from '@aalis/api-reach';
import { sandboxRequestOf } from '@aalis/plugin-tools';
import type { LinuxSandbox } from '@aalis/sandbox-linux';
import { afterAll, describe, expect, it } from 'vitest';
import { type RunningDaemon, startDaemon } from './daemon.js';
import { deploymentDir, ownerTurn } from './serve-process.testing.js';

const dir = deploymentDir({ owners: { chat: ['alice'] } });
let daemon: RunningDaemon | undefined;
afterAll(async () => {
  await daemon?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** This process's sandbox run folders (a LinuxSandbox names them after its pid). */
const runFolders = () => readdirSync(tmpdir()).filter((name) => name.startsWith(`aalis-sbx-${process.pid}-`));
/** Of those, the folders of sandboxes prepared ahead and not yet released (sandbox-linux run-dir.ts marks them `prepared`). */
const preparedFolders = () => runFolders().filter((name) => existsSync(join(tmpdir(), name, 'prepared')));

describe('stopping the daemon', () => {
  it('closes the sandbox service: the writes a run kept for an answer are gone with the stop', { timeout: 180_000 }, async () => {
    const before = runFolders();
    daemon = await startDaemon({ deploymentDir: dir, port: 0, env: { ...process.env, AALIS_TOKEN: '' } });
    const service = daemon.kernel.get(sandbox);
    expect(service.backend).toBe('linux');
    // the request run_command would send first, for an owner's command in the daemon's workspace
    const credential = await daemon.kernel.get(reach).forCall(ownerTurn('chat-close'));
    expect(credential.home).toBeDefined();
    const request = await sandboxRequestOf(credential, service, { argv: ['/bin/sh', '-c', 'echo hook > lefthook.yml'], cwd: credential.home as string, timeoutMs: 60_000, network: 'off' }); // network off: a policy a root daemon prepares sandboxes for
    expect(request.keepRefused).toBe(true);
    await service.run(request); // a daemon prepares a policy's next sandboxes from its second run (preparedFrom)
    const result = await service.run(request);
    expect(result.keptWrites?.paths, result.stderr).toEqual([`${credential.home}/lefthook.yml`]);
    // a root daemon prepares the policy's next sandboxes (each in a folder of its own): accounted for, and gone with the stop too
    const linux = service as LinuxSandbox;
    await linux.preparationsSettled();
    const counts = linux.preparedCounts();
    const prepared = preparedFolders().filter((name) => !before.includes(name));
    expect(prepared).toHaveLength(counts.prepared - counts.used - counts.discarded);
    if (process.getuid?.() === 0) expect(prepared.length).toBeGreaterThan(0);
    const kept = runFolders().filter((name) => !before.includes(name) && !prepared.includes(name));
    expect(kept).toHaveLength(2); // each of the two runs kept its refused write for an answer

    await daemon.stop();
    daemon = undefined;
    expect(runFolders().filter((name) => kept.includes(name) || prepared.includes(name))).toEqual([]);
  });
});
