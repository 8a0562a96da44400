// The console panel driven in a real Chromium (headless, playwright-core) against the pod's
// routes on a plain node:http server, a real pod, bubblewrap and python3. The model is a
// scripted chat-completions server: the one part that cannot run here.
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { sessions } from '@aalis/core';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeModel, startFakeModel } from './fake-model.testing.js';
import { makePlace, type Place, type PodEnv, startPod } from './harness.testing.js';
import { servePod } from './serve.testing.js';

let place: Place;
let model: FakeModel;
let env: PodEnv;
let server: Awaited<ReturnType<typeof servePod>>;
let browser: Browser;
let page: Page;

// The panel polls once a second; give every wait room for a loaded machine.
const poll = <T>(read: () => Promise<T> | T) => expect.poll(read, { timeout: 15_000, interval: 100 });

beforeAll(async () => {
  place = makePlace();
  model = await startFakeModel([
    {
      match: 'generate a CSV with Python',
      steps: [
        { call: 'run_python', args: { code: "import csv\nw = csv.writer(open('data.csv', 'w', newline=''))\nw.writerows([('region', 'sales'), ('north', 10)])\nopen('note\\u202etxt.md', 'w').write('x')\nprint('rows written: 2')" } },
        { call: 'finish', args: { conclusion: 'data.csv holds the sales by region.', summary: 'sales CSV, 1 region' } },
      ],
    },
  ]);
  env = await startPod(place, { baseURL: model.baseURL });
  server = await servePod(env.pod);
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  page = await browser.newPage();
  page.on('dialog', (dialog) => void dialog.accept());
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
  await env?.kernel.stop();
  await model?.close();
  rmSync(place.root, { recursive: true, force: true });
});

describe('the pod panel in Chromium', () => {
  it('runs a task, shows its live state, log and files, returns one message, exports with confirmation, undoes, cleans up', async () => {
    const conversation = env.kernel.get(sessions);
    const print = await conversation.fingerprint('main');
    const requests: string[] = [];
    page.on('request', (r) => requests.push(r.url()));
    const served = await page.goto(`${server.url}/pod`);
    // its script runs by its hash: no other inline script would (the page works below, so the hash is right)
    expect(served?.headers()['content-security-policy']).toMatch(/script-src 'sha256-[A-Za-z0-9+/]+=*';/);

    // No sandbox root yet: the panel says so, and a task is refused with the reason.
    await poll(() => page.locator('#no-root').isVisible()).toBe(true);
    await page.fill('#task-input', 'generate a CSV with Python');
    await page.click('#run');
    await poll(() => page.textContent('#start-error')).toContain('no sandbox root is configured');
    await page.fill('#root-input', place.project);
    await page.click('#root-set');
    await poll(() => page.textContent('#start-error')).toContain('inside the workspace or project');
    await page.fill('#root-input', join(place.root, 'box'));
    await page.click('#root-set');
    await poll(() => page.textContent('#root-line')).toBe(`sandbox root: ${join(place.root, 'box')}`);

    await page.fill('#task-input', 'generate a CSV with Python');
    await page.fill('#subdir-input', 'ui');
    await page.click('#run');
    await poll(() => page.textContent('#detail-state')).toBe('succeeded');
    await poll(() => page.locator('tr.task .state').first().textContent()).toBe('succeeded');
    // the list is polled every second; a row whose task did not change is the same element after
    // two polls (redrawn each tick, a click spanning one was lost)
    await page.locator('tr.task').first().evaluate((row) => row.setAttribute('data-mark', 'kept'));
    await page.waitForTimeout(2_200);
    expect(await page.locator('tr.task').first().getAttribute('data-mark')).toBe('kept');
    await poll(() => page.textContent('#log')).toContain('stdout: rows written: 2');
    const log = (await page.textContent('#log')) ?? '';
    expect(log).toContain('call run_python');
    expect(log).toContain('exit code 0');
    expect(log).toContain('finished: succeeded');
    await poll(() => page.textContent('#files')).toContain('data.csv');
    // a name with U+202E (made by the task) shown as written, not laid out right to left
    await poll(() => page.textContent('#files')).toContain('note\\u202etxt.md');
    expect(await page.textContent('#files')).not.toContain('\u202e');
    expect(await page.textContent('#detail-conclusion')).toBe('data.csv holds the sales by region.');
    expect(await conversation.fingerprint('main')).toBe(print);

    // Return: exactly one short message.
    const before = (await conversation.get('main')).history.length;
    await page.click('#open-return');
    await page.selectOption('#return-kind', 'summary');
    await page.click('#return-confirm');
    await poll(() => page.textContent('#action-message')).toContain('Returned one message');
    const history = (await conversation.get('main')).history;
    expect(history).toHaveLength(before + 1);
    expect(history.at(-1)!.content).toMatch(/^\[Isolation Pod task pod-[0-9a-f]+, summary\] sales CSV, 1 region$/);
    expect(existsSync(join(place.project, 'data.csv'))).toBe(false);

    // Export: a plan, then this one confirmation.
    await page.click('#open-export');
    await page.check('.export-file[value="data.csv"]');
    await page.fill('#export-to', place.project);
    await page.click('#export-plan');
    await poll(() => page.textContent('#export-items')).toContain(join(place.project, 'data.csv'));
    expect(await page.locator('#export-remember-row').isVisible()).toBe(false);
    expect(existsSync(join(place.project, 'data.csv'))).toBe(false);
    await page.click('#export-confirm');
    await poll(() => page.textContent('#action-message')).toContain('Exported 1 file(s)');
    expect(readFileSync(join(place.project, 'data.csv'), 'utf8')).toBe('region,sales\r\nnorth,10\r\n');
    expect((await conversation.get('main')).history).toHaveLength(before + 1);

    // A second export asks again: a new plan, a clash to decide, nothing written before confirming.
    await page.click('#open-export');
    await page.check('.export-file[value="data.csv"]');
    await page.fill('#export-to', place.project);
    await page.click('#export-plan');
    await poll(() => page.locator('#export-clash-row').isVisible()).toBe(true);
    await page.click('#export-confirm');
    await poll(() => page.textContent('#export-error')).toContain('choose overwrite, skip or rename');
    await page.click('#export-close');
    expect((await env.pod.exports()).length).toBe(1);

    // Undo from the export log.
    await page.click('#exports button.undo');
    await poll(() => page.textContent('#action-message')).toContain('undone');
    expect(existsSync(join(place.project, 'data.csv'))).toBe(false);

    // Clean up the task.
    const [task] = env.pod.list();
    await page.click('#clean-task');
    await poll(() => page.textContent('#action-message')).toContain(`Cleaned ${task!.id}`);
    expect(existsSync(task!.dirs.base)).toBe(false);
    await poll(() => page.textContent('#files')).toContain('no files');

    expect(requests.every((u) => u.startsWith(server.url))).toBe(true);
  }, 60_000);

  it('offers "remember this choice" only when enabled, applies it only when ticked, and revokes it', async () => {
    const env2 = await startPod(place, { baseURL: model.baseURL, sandboxRoot: join(place.root, 'box2'), export: { allowRemember: true } });
    const server2 = await servePod(env2.pod);
    const page2 = await browser.newPage();
    try {
      const task = await env2.pod.wait((await env2.pod.start({ task: 'generate a CSV with Python' })).id);
      await page2.goto(`${server2.url}/pod`);
      await page2.click(`tr.task[data-id="${task.id}"]`);
      await poll(() => page2.textContent('#files')).toContain('data.csv');
      const exportTo = async (folder: string) => {
        await page2.click('#open-export');
        await page2.check('.export-file[value="data.csv"]');
        await page2.fill('#export-to', join(place.project, folder));
        await page2.click('#export-plan');
      };
      await exportTo('r');
      await poll(() => page2.locator('#export-remember-row').isVisible()).toBe(true);
      expect(await page2.isChecked('#export-remember')).toBe(false);
      await page2.check('#export-remember');
      await page2.click('#export-confirm');
      await poll(() => page2.textContent('#grants')).toContain(join(place.project, 'r'));
      expect(env2.pod.grants()).toHaveLength(1);
      // Under the remembered choice the next export to that folder needs no confirmation (the clash is skipped by choice).
      await env2.pod.exportFiles({ taskId: task.id, files: ['data.csv'], to: join(place.project, 'r'), onClash: 'skip' });
      expect((await env2.pod.exports()).at(-1)).toMatchObject({ via: 'remembered' });
      await page2.click('#grants button');
      await poll(() => page2.locator('#grants-box').isVisible()).toBe(false);
      expect(env2.pod.grants()).toEqual([]);
      await exportTo('r');
      await poll(() => page2.locator('#export-plan-box').isVisible()).toBe(true);
      expect(await page2.locator('#export-confirm').isVisible()).toBe(true);
    } finally {
      await page2.close();
      await server2.close();
      await env2.kernel.stop();
    }
  }, 60_000);
});
