/*
 * The daemon commit-conflicts-unprivileged.test.ts runs as `nobody`: a run whose host file is
 * edited while the command sleeps (a conflict), then a run that appends to a host file (its
 * copy-up carries `user.overlay.origin`), then a run that makes a folder with no search bit
 * (`chmod 000`) and writes after it (its mode is set from above, once the walk is out), then a
 * run that changes a host file and leaves it unreadable (`chmod 000`). Prints
 * what each run returned, as JSON.
 */
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { req, type Scene } from './scene.testing.js';
import { createLinuxSandbox } from './service.js';

const s = JSON.parse(process.argv[2]!) as Scene;
const tmpDir = join(s.root, 'daemon-tmp-nobody');
mkdirSync(tmpDir, { recursive: true });
const sb = createLinuxSandbox({ hostModel: 'overlay', tmpDir });
const ready = () => readdirSync(tmpDir).some((run) => existsSync(join(tmpDir, run, 'overlay')) && readdirSync(join(tmpDir, run, 'overlay')).some((i) => existsSync(join(tmpDir, run, 'overlay', i, 'upper', 'ready'))));

writeFileSync(join(s.ws, 'h.txt'), 'orig\n');
const run = sb.run(req(s, ['sh', '-c', 'echo command >> h.txt; touch ready; sleep 2; rm ready']));
const end = Date.now() + 30_000;
while (!ready() && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
writeFileSync(join(s.ws, 'h.txt'), 'user\n');
const conflict = await run;
writeFileSync(join(s.ws, 'x.txt'), 'x\n');
const append = await sb.run(req(s, ['sh', '-c', 'echo more >> x.txt']));
const locked = await sb.run(req(s, ['sh', '-c', 'mkdir made && cd made && echo 1 > f1 && mkdir locked && echo in > locked/in && chmod 000 locked && echo 2 > g2 && cd .. && echo top > top.txt']));
// a host file the command changed (so copied, not renamed) and left unreadable: committed with its mode
writeFileSync(join(s.ws, 'w.txt'), 'old\n');
const unreadable = await sb.run(req(s, ['sh', '-c', 'echo new > w.txt && chmod 000 w.txt && echo after > after.txt']));
process.stdout.write(JSON.stringify({ conflict, append, locked, unreadable }), () => process.exit(0));
