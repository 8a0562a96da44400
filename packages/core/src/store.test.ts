import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { DurableStore } from './store.js';

const dirs: string[] = [];
async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'aalis-store-'));
  dirs.push(dir);
  return dir;
}
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

describe('DurableStore', () => {
  it('reads back documents and logs, and undefined for a document never written', async () => {
    const store = await DurableStore.open(await tempDir());
    expect(await store.read('missing')).toBeUndefined();
    await store.write('doc', { a: 1 });
    await store.write('doc', { a: 2 });
    expect(await store.read('doc', z.object({ a: z.number() }))).toEqual({ a: 2 });
    await store.append('log', { n: 1 });
    await store.append('log', { n: 2 });
    expect(await store.readLog('log')).toEqual({ records: [{ n: 1 }, { n: 2 }], torn: 0, invalid: 0 });
  });

  it('refuses names that could leave the directory', async () => {
    const store = await DurableStore.open(await tempDir());
    await expect(store.write('../escape', 1)).rejects.toThrow(/no path separators/);
    await expect(store.append('a/b', 1)).rejects.toThrow(/refused/);
  });

  it('names the file when a document fails its schema', async () => {
    const store = await DurableStore.open(await tempDir());
    await store.write('doc', { a: 'text' });
    await expect(store.read('doc', z.object({ a: z.number() }))).rejects.toThrow(/doc\.json does not hold what was expected: a:/);
  });

  it('skips a torn last line and counts invalid ones', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'log.jsonl'), '{"n":1}\nnot json\n{"n":2}\n{"n":');
    const store = await DurableStore.open(dir);
    expect(await store.readLog('log')).toEqual({ records: [{ n: 1 }, { n: 2 }], torn: 1, invalid: 1 });
  });

  it('seals a torn last line before appending, so the new record is whole', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'log.jsonl'), '{"n":1}\n{"n":');
    const store = await DurableStore.open(dir);
    await store.append('log', { n: 3 });
    expect(await store.readLog('log')).toEqual({ records: [{ n: 1 }, { n: 3 }], torn: 0, invalid: 1 });
  });

  it('applies concurrent writes to one document in call order', async () => {
    const store = await DurableStore.open(await tempDir());
    await Promise.all(Array.from({ length: 50 }, (_, i) => store.write('doc', { i })));
    expect(await store.read('doc')).toEqual({ i: 49 });
  });

  // A real process killed with SIGKILL in the middle of writing: the document must be one
  // whole version and every log line whole, over several kills at different moments.
  it('loses nothing when the writer is killed mid-write', async () => {
    const dir = await tempDir();
    const child = join(import.meta.dirname, 'fixtures', 'store-writer.ts');
    for (let round = 0; round < 5; round++) {
      const writer = spawn(process.execPath, ['--import', 'tsx', child, dir], { stdio: ['ignore', 'pipe', 'inherit'] });
      await new Promise<void>((resolve, reject) => {
        writer.stdout.once('data', () => resolve());
        writer.once('error', reject);
      });
      // once the first version of each is whole (ready comes before any write, and a loaded
      // machine can take longer than the pause below for it), then at a different moment per round
      const firstWritten = () => existsSync(join(dir, 'state.json')) && existsSync(join(dir, 'events.jsonl')) && readFileSync(join(dir, 'events.jsonl'), 'utf8').includes('\n');
      for (const end = Date.now() + 60_000; !firstWritten() && Date.now() < end; ) await new Promise((r) => setTimeout(r, 10));
      await new Promise((r) => setTimeout(r, 150 + round * 70));
      const exited = new Promise((r) => writer.once('exit', r));
      writer.kill('SIGKILL');
      await exited;

      const store = await DurableStore.open(dir);
      const state = await store.read('state', z.object({ version: z.number(), check: z.number(), padding: z.string() }));
      expect(state).toBeDefined();
      expect(state?.check).toBe(state?.version);
      expect(state?.padding.length).toBe(64 * 1024);
      const log = await store.readLog('events', z.object({ version: z.number(), padding: z.string() }));
      expect(log.invalid).toBe(0);
      expect(log.torn).toBe(0);
      expect(log.records.length).toBeGreaterThan(0);
      for (const record of log.records) expect(record.padding.length).toBe(2048 + (record.version % 4096));
      // Opening the store removed whatever temp file the kill left behind.
      expect((await readdir(dir)).filter((f) => f.endsWith('.aalis-tmp'))).toEqual([]);
    }
  }, 60_000);
});

// Found by an attack (h105): a FIFO at a document's name held the daemon's start for good (SIGTERM
// did not end it), and a document made a link to /etc/shadow had its first characters quoted in
// the error a root daemon printed.
describe("DurableStore's reads of what is no document", () => {
  it('refuses a FIFO at once, naming it, and quotes nothing of a file that is not JSON', { timeout: 10_000 }, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'aalis-store-fifo-'));
    try {
      const store = await DurableStore.open(dir);
      const { execFileSync } = await import('node:child_process');
      execFileSync('mkfifo', [join(dir, 'adapters.json')]);
      await expect(store.read('adapters')).rejects.toThrow(/adapters\.json is not a regular file/);
      execFileSync('mkfifo', [join(dir, 'log.jsonl')]);
      await expect(store.readLog('log')).rejects.toThrow(/log\.jsonl is not a regular file/);
      await writeFile(join(dir, 'secret.json'), 'root:$y$j9T$secrethash:20000:0:99999:7:::\n');
      const error = await store.read('secret').catch((e: Error) => e);
      expect(String(error)).toMatch(/secret\.json is not valid JSON/);
      expect(String(error)).not.toContain('root:');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
