/*
 * The "daemon" commit-journal.test.ts kills mid-commit: one run under the overlay, its layers in
 * `tmpDir` (another file system than the workspace, so the commit copies through temps), whose
 * command writes a few small files and one large one (random bytes: a file of zeros is copied as holes, at once, and no kill could land mid-copy).
 */
import { req, type Scene, workspacePolicy } from './scene.testing.js';
import { createLinuxSandbox } from './service.js';

const [scene, tmpDir, folderHex] = process.argv.slice(2) as [string, string, string];
const s = JSON.parse(scene) as Scene;
const sb = createLinuxSandbox({ hostModel: 'overlay', tmpDir });
// the folder's name by its bytes, as printf octal escapes (it may not be UTF-8)
const folder = [...Buffer.from(folderHex, 'hex')].map((b) => `\\${b.toString(8).padStart(3, '0')}`).join('');
await sb.run(req(s, ['sh', '-c', `d="$(printf '${folder}')" && mkdir -p "$d" && echo a > "$d/a.txt" && head -c 1000000000 /dev/urandom > "$d/large.bin"`], { policy: workspacePolicy(s), timeoutMs: 120_000 }));
