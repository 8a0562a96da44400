// A deployment's config is readable by tool calls (the owner's agent may look at it), unless it
// holds a secret itself: an inline `model.apiKey` (where `apiKeyEnv` keeps the key in `.env`, on the
// deny-read list). Found by an attack: a pod task read the key with read_file through
// /proc/self/cwd/aalis.config.json. Real daemons, a real tool call each.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { deploymentDir, ownerTurn, type ServeProcess, startServe } from './serve-process.testing.js';

const started: { dir: string; daemon?: ServeProcess }[] = [];
afterEach(async () => {
  for (const s of started.splice(0)) {
    await s.daemon?.stop();
    rmSync(s.dir, { recursive: true, force: true });
  }
});

async function readConfig(model: Record<string, unknown>) {
  const dir = deploymentDir({ owners: { chat: ['alice'] }, model: { baseURL: 'http://127.0.0.1:9/v1', model: 'm', ...model } });
  const entry: { dir: string; daemon?: ServeProcess } = { dir };
  started.push(entry);
  entry.daemon = await startServe(dir);
  const answer = await entry.daemon.api('POST', '/api/tools/call', { tool: 'read_file', params: { path: join(dir, 'aalis.config.json') }, turn: ownerTurn('config-secret') });
  return answer.body;
}

describe("a deployment config's secret", () => {
  it('a config with an inline model key is refused by deny-read; one naming an environment variable is read', async () => {
    expect(await readConfig({ apiKey: 'sk-inline-SECRET' })).toMatchObject({ ok: false, message: expect.stringContaining('deny-read') });
    const plain = await readConfig({ apiKeyEnv: 'AALIS_TEST_MODEL_KEY' });
    expect(plain).toMatchObject({ ok: true });
    expect(JSON.stringify(plain)).toContain('AALIS_TEST_MODEL_KEY');
  }, 120_000);
});
