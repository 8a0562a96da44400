// The console's chat pane in a real browser (Debian's chromium via playwright-core) against the
// real daemon. The model is the only stand-in: @aalis/model's scripted chat-completions server,
// streaming.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ScriptedModel, startScriptedModel } from '@aalis/model';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deploymentDir, type ServeProcess, startServe } from '../daemon/serve-process.testing.js';

const CHROMIUM = '/usr/bin/chromium';

describe.skipIf(!existsSync(CHROMIUM) && process.env.CI !== 'true')('the console chat pane in chromium', () => {
  let dir: string;
  let outside: string;
  let profile: string;
  let model: ScriptedModel;
  let daemon: ServeProcess;
  let browser: BrowserContext;
  let page: Page;

  beforeAll(async () => {
    dir = deploymentDir();
    const workspace = join(realpathSync(dir), 'data', 'workspace');
    outside = `${realpathSync(dir)}-outside`;
    mkdirSync(outside);
    model = await startScriptedModel([
      {
        match: 'tidy up',
        steps: [
          { call: 'read_file', args: { path: join(workspace, 'missing.txt') } },
          { call: 'write_file', args: { path: join(workspace, 'summary.txt'), content: 'summary\n' } },
          { call: 'write_file', args: { path: join(outside, 'from-the-chat.txt'), content: 'approved in the chat\n' } },
          { say: 'All tidied: the summary and the copy are written.' },
        ],
      },
      { match: 'garbage', steps: [{ status: 200, body: '<html>' }] },
    ]);
    writeFileSync(join(dir, 'aalis.config.json'), JSON.stringify({ approval: { timeoutMs: 120_000 }, model: { baseURL: model.baseURL, model: 'scripted', requestTimeoutMs: 10_000 } }));
    profile = mkdtempSync('/var/tmp/aalis-chat-profile-');
    daemon = await startServe(dir);
    browser = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
      viewport: { width: 1280, height: 1000 },
    });
    page = await browser.newPage();
    await page.goto(daemon.consoleUrl);
    await page.locator('#live.on').waitFor({ timeout: 15_000 });
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await daemon?.stop();
    await model?.close();
    for (const path of [dir, outside, profile]) if (path) rmSync(path, { recursive: true, force: true });
  });

  it('chats: the reply streams in, each tool call shows with its outcome, and the outside write is approved inline', async () => {
    await page.locator('#chat-input').fill('please tidy up');
    await page.getByRole('button', { name: 'Send' }).click();
    const ask = page.locator('#chat-log article.pending', { hasText: 'from-the-chat.txt' });
    await ask.waitFor({ timeout: 20_000 });
    expect(existsSync(join(outside, 'from-the-chat.txt'))).toBe(false);
    // The calls before the ask are shown with their outcomes: a refused read and a write inside.
    await expect.poll(() => page.locator('#chat-log .tool[data-tool="read_file"]').getAttribute('class')).toContain('bad');
    await expect.poll(() => page.locator('#chat-log .tool[data-tool="write_file"]').first().getAttribute('class')).toContain('ok');
    await ask.getByRole('button', { name: 'Approve once' }).click();
    await expect.poll(() => page.locator('#chat-status').textContent(), { timeout: 20_000 }).toBe('Answered.');
    expect(await page.locator('#chat-log .bubble.assistant').last().textContent()).toContain('All tidied: the summary and the copy are written.');
    expect(await page.locator('#chat-log .bubble.user').first().textContent()).toContain('please tidy up');
    expect(await page.locator('#chat-log .tool.ok').count()).toBe(2);
    expect(readFileSync(join(outside, 'from-the-chat.txt'), 'utf8')).toBe('approved in the chat\n');
    // Reloaded, the history shows the same exchange.
    await page.reload();
    await page.locator('#live.on').waitFor({ timeout: 15_000 });
    await expect.poll(() => page.locator('#chat-log .tool').count()).toBe(3);
    expect(await page.locator('#chat-log .bubble.assistant').last().textContent()).toContain('All tidied');
  }, 90_000);

  it('shows a model failure in the conversation, with what to check', async () => {
    await page.locator('#chat-input').fill('garbage');
    await page.getByRole('button', { name: 'Send' }).click();
    // 60 s, as the suite's other waits: on a loaded CI machine the failed turn was not shown within 20 s once
    await expect.poll(() => page.locator('#chat-status').textContent(), { timeout: 60_000 }).toContain('The turn failed');
    expect(await page.locator('#chat-status').textContent()).toContain('Check that model.baseURL');
    expect(await page.locator('#chat-log .bubble.system').last().textContent()).toContain('the model could not answer');
  }, 90_000);
});
