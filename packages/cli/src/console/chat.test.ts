// The console's chat pane in a real browser (Debian's chromium via playwright-core) against the
// real daemon. The model is the only stand-in: @aalis/model's scripted chat-completions server,
// streaming.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ScriptedModel, startScriptedModel } from '@aalis/model';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deploymentDir, ownerTurn, type ServeProcess, startServe } from '../daemon/serve-process.testing.js';
import { TEST_SCRATCH } from '../../../../test/scratch.js';

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
      // The reviewer's script comes first: its prompt quotes the conversation, earlier messages included.
      { match: 'taken-back.txt', steps: [{ hang: true }] },
      { match: 'rejected-by-hand.txt', steps: [{ hang: true }] },
      {
        match: 'tidy up',
        steps: [
          { call: 'read_file', args: { path: join(workspace, 'missing.txt') } },
          { call: 'write_file', args: { path: join(workspace, 'summary.txt'), content: 'summary\n' } },
          { call: 'write_file', args: { path: join(outside, 'from-the-chat.txt'), content: 'approved in the chat\n' } },
          { say: 'All tidied: the summary and the copy are written.' },
        ],
      },
      {
        match: 'reject it yourself',
        steps: [{ call: 'write_file', args: { path: join(outside, 'rejected-by-hand.txt'), content: 'x' } }, { say: 'Not written: you said no.' }],
      },
      { match: 'garbage', steps: [{ status: 200, body: '<html>' }] },
      {
        match: 'name it oddly',
        steps: [{ call: 'write_file', args: { path: join(outside, 'report\u202etxt.exe'), content: 'x' } }, { say: 'Asked for \u202etxt.exe and \u001b[31mred.' }],
      },
      { match: 'let me take it', steps: [{ call: 'write_file', args: { path: join(outside, 'taken-back.txt'), content: 'by hand\n' } }, { say: 'Written, as you approved.' }] },
    ]);
    writeFileSync(join(dir, 'aalis.config.json'), JSON.stringify({ approval: { timeoutMs: 120_000 }, model: { baseURL: model.baseURL, model: 'scripted', requestTimeoutMs: 10_000 } }));
    profile = mkdtempSync(join(TEST_SCRATCH, 'aalis-chat-profile-'));
    daemon = await startServe(dir);
    browser = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
      viewport: { width: 1280, height: 1000 },
    });
    page = await browser.newPage();
    await page.goto(await daemon.consoleAddress());
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

  // The turn's events and the answer to the POST that started it travel apart: a turn that failed
  // at once could end (turn/ended) before the POST's answer reached the page, which then said
  // "The agent is answering…" for ever (seen in CI under load). The answer is held back here.
  it('a turn that ends before the answer to its POST arrives still shows its end', async () => {
    await page.route('**/api/turns', async (route) => {
      const response = await route.fetch();
      await model.untilAsked('garbage, late', 30_000);
      await new Promise((r) => setTimeout(r, 1500));
      await route.fulfill({ response });
    });
    try {
      await page.locator('#chat-input').fill('garbage, late');
      await page.getByRole('button', { name: 'Send' }).click();
      await expect.poll(() => page.locator('#chat-status').textContent(), { timeout: 60_000 }).toContain('The turn failed');
      // the held answer has arrived by now and did not overwrite the end
      await page.waitForTimeout(2500);
      expect(await page.locator('#chat-status').textContent()).toContain('The turn failed');
    } finally {
      await page.unroute('**/api/turns');
    }
  }, 90_000);

  it("takes an ask back from the reviewer: switched to human in the console while the reviewer's model is asked, the ask waits and is approved inline", async () => {
    // The chat pane's conversation exists once anything was said in it; opened here so this test stands alone.
    expect((await daemon.api('POST', '/api/turns', { turn: ownerTurn('console'), reply: false })).status).toBe(200);
    const settings = await daemon.api('POST', '/api/sessions/console/settings', { runMode: 'execute', approver: 'reviewer', tier: 'workspace', boundary: 'ask' });
    expect(settings.status, JSON.stringify(settings.body)).toBe(200);
    await page.locator('#chat-input').fill('let me take it');
    await page.getByRole('button', { name: 'Send' }).click();
    const ask = page.locator('#chat-log article.pending', { hasText: 'taken-back.txt' });
    await ask.waitFor({ timeout: 60_000 });
    await model.untilAsked('taken-back.txt', 60_000);
    // The person switches the conversation's approver to human in its settings panel.
    const session = page.locator('article.session[data-session="console"]');
    await session.locator('select[name="approver"]').selectOption('human');
    await session.getByRole('button', { name: 'Apply' }).click();
    await expect.poll(() => session.locator('.msg').textContent(), { timeout: 30_000 }).toContain('Applied');
    // The reviewer hangs up its model request and gives no verdict: the ask is still the person's.
    await model.untilHungUp('taken-back.txt', 60_000);
    expect((await daemon.api('GET', '/api/approvals/pending?session=console')).body.pending).toHaveLength(1);
    await ask.getByRole('button', { name: 'Approve once' }).click();
    await expect.poll(() => page.locator('#chat-status').textContent(), { timeout: 60_000 }).toBe('Answered.');
    expect(readFileSync(join(outside, 'taken-back.txt'), 'utf8')).toBe('by hand\n');
    const audit = (await daemon.api('GET', '/api/audit?session=console')).body.records;
    expect(audit.filter((r: { event: string; path?: string }) => r.event === 'resolved').at(-1)).toMatchObject({ via: 'human', outcome: 'approved' });
  }, 120_000);

  it('a person rejects inline, with a reason, while the reviewer is asked: the reason reaches the agent, nothing is written', async () => {
    expect((await daemon.api('POST', '/api/turns', { turn: ownerTurn('console'), reply: false })).status).toBe(200);
    const settings = await daemon.api('POST', '/api/sessions/console/settings', { runMode: 'execute', approver: 'reviewer', tier: 'workspace', boundary: 'ask' });
    expect(settings.status, JSON.stringify(settings.body)).toBe(200);
    await page.locator('#chat-input').fill('reject it yourself');
    await page.getByRole('button', { name: 'Send' }).click();
    const ask = page.locator('#chat-log article.pending', { hasText: 'rejected-by-hand.txt' });
    await ask.waitFor({ timeout: 60_000 });
    await model.untilAsked('rejected-by-hand.txt', 60_000);
    await ask.getByRole('textbox', { name: 'reason' }).fill('not this file, thanks');
    await ask.getByRole('button', { name: 'Reject' }).click();
    await expect.poll(() => page.locator('#chat-status').textContent(), { timeout: 60_000 }).toBe('Answered.');
    expect(existsSync(join(outside, 'rejected-by-hand.txt'))).toBe(false);
    await expect.poll(() => page.locator('#chat-log .tool[data-tool="write_file"].bad').last().textContent(), { timeout: 30_000 }).toContain('not this file, thanks');
    const audit = (await daemon.api('GET', '/api/audit?session=console')).body.records;
    expect(audit.filter((r: { event: string }) => r.event === 'resolved').at(-1)).toMatchObject({ via: 'human', outcome: 'rejected', reason: 'not this file, thanks' });
  }, 120_000);

  // U+202E lays out what follows right to left: 'report\u202etxt.exe' reads 'reportexe.txt' in a
  // browser, so an ask would show another name than the file it writes.
  it('shows bidirectional overrides and control characters as escapes, in asks, tool lines and replies', async () => {
    const settings = await daemon.api('POST', '/api/sessions/console/settings', { approver: 'human' });
    expect(settings.status, JSON.stringify(settings.body)).toBe(200);
    await page.locator('#chat-input').fill('name it oddly');
    await page.getByRole('button', { name: 'Send' }).click();
    const ask = page.locator('#chat-log article.pending', { hasText: 'report\\u202etxt.exe' });
    await ask.waitFor({ timeout: 60_000 });
    expect(await ask.textContent()).not.toContain('\u202e');
    await ask.getByRole('button', { name: 'Reject' }).click();
    await expect.poll(() => page.locator('#chat-status').textContent(), { timeout: 60_000 }).toBe('Answered.');
    const reply = await page.locator('#chat-log .bubble.assistant').last().textContent();
    expect(reply).toContain('Asked for \\u202etxt.exe and \\u001b[31mred.');
    expect(await page.locator('#chat-log').textContent()).not.toMatch(/[\u202e\u001b]/);
  }, 120_000);
});
