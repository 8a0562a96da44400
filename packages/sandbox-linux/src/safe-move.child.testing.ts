/*
 * moveAt run as `nobody` (safe-move.test.ts): moves `name` out of the directory `src` to `dest`
 * and prints what happened, as JSON.
 */
import { closeSync } from 'node:fs';
import { openDir } from './host-walk.js';
import { moveAt } from './safe-move.js';

const [src, dest, name] = process.argv.slice(2) as [string, string, string];
const fd = openDir(src);
if (fd === undefined) throw new Error(`${src} is not a directory`);
let out: { ok: true } | { ok: false; code?: string; message: string };
try {
  moveAt(fd, Buffer.from(name), Buffer.from(dest));
  out = { ok: true };
} catch (e) {
  out = { ok: false, code: (e as { code?: string }).code, message: (e as Error).message };
} finally {
  closeSync(fd);
}
process.stdout.write(JSON.stringify(out), () => process.exit(0));
