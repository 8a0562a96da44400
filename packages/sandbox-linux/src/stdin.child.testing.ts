/*
 * The "daemon" stdin-stream.test.ts runs as nobody: the live-stdin scenarios (stdin.scenarios.testing.ts)
 * under the overlay model, run folders in `tmpDir`, their answers printed as JSON.
 */
import type { Scene } from './scene.testing.js';
import { createLinuxSandbox } from './service.js';
import { bytes, eof, neverReads, twoTimes } from './stdin.scenarios.testing.js';

const [scene, tmpDir] = process.argv.slice(2) as [string, string];
const s = JSON.parse(scene) as Scene;
const sb = createLinuxSandbox({ hostModel: 'overlay', landingSweepMs: 0, tmpDir });
const out = { twoTimes: await twoTimes(sb, s, tmpDir), eof: await eof(sb, s), bytes: await bytes(sb, s), neverReads: await neverReads(sb, s) };
await sb.close();
process.stdout.write(JSON.stringify(out), () => process.exit(0));
