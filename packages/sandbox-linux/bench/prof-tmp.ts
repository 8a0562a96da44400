import { makeScene, req } from '../src/scene.testing.js';
import { createLinuxSandbox } from '../src/index.js';
const s = makeScene();
const sb = createLinuxSandbox({ hostModel: 'overlay' });
for (let i = 0; i < 5; i++) await sb.run(req(s, ['true']));
const xs: number[] = [];
for (let i = 0; i < Number(process.env.N ?? 80); i++) {
  const t = performance.now();
  await sb.run(req(s, ['true']));
  xs.push(performance.now() - t);
}
xs.sort((a, b) => a - b);
console.log('median', xs[40]!.toFixed(1), 'p10', xs[8]!.toFixed(1));
await sb.close();
s.cleanup();
