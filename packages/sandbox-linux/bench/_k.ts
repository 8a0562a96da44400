import { existsSync } from 'node:fs';
import { makeScene, req } from '../src/scene.testing.js';
import { createLinuxSandbox } from '../src/index.js';
const s = makeScene();
const sb = createLinuxSandbox();
const marker = `${s.root}/ran`;
const ac = new AbortController(); ac.abort();
const r = await sb.run({ ...req(s, ['sh', '-c', `touch ${marker}`]), signal: ac.signal });
await new Promise((res) => setTimeout(res, 300));
console.log('aborted run:', r.exitCode, r.signal, 'marker exists:', existsSync(marker));
let ran = 0;
for (let i = 0; i < 10; i++) {
  await sb.run({ ...req(s, ['sh', '-c', `touch ${marker}-t${i}`]), timeoutMs: 1 + (i % 4) });
}
await new Promise((res) => setTimeout(res, 300));
for (let i = 0; i < 10; i++) if (existsSync(`${marker}-t${i}`)) ran++;
console.log('short timeouts: commands that ran anyway', ran, 'of 10');
s.cleanup();
