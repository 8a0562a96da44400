// An adapter's own token, through the real daemon and its HTTP API: bound to one platform, it
// takes turns, answers and lists only of that platform's people and conversations, and none of
// the owner's routes (found by an attack: with the daemon's one token, a chat bridge vouched for
// anyone on any platform and joined any conversation).
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { closeSync, existsSync, fchmodSync, mkdirSync, openSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, childEnv, deploymentDir, ownerTurn, type ServeProcess, startServe, subscribe } from './serve-process.testing.js';

const TG_ALICE = { platform: 'telegram', userId: 'tg-alice' };
const CHAT_ALICE = { platform: 'chat', userId: 'alice' };

/** A turn on telegram in conversation `telegram:<session>` (an adapter's ids carry its platform), spoken by `who` (the adapter authenticated it). */
function telegramTurn(session: string, who = TG_ALICE) {
  return { session: { id: `telegram:${session}` }, platform: 'telegram', speaker: who, authorised: who, inbound: { id: `m-${Date.now()}` }, category: 'own' as const };
}

describe('aalis serve: an adapter acts within its platform', () => {
  let dir: string;
  let daemon: ServeProcess;
  let outside: string;
  let adapter: string;

  beforeAll(async () => {
    dir = deploymentDir({ owners: { chat: ['alice'], telegram: ['tg-alice'] }, approval: { timeoutMs: 60_000 } });
    outside = join(dir, '..', `${dir.split('/').pop()}-outside`);
    mkdirSync(outside, { recursive: true });
    daemon = await startServe(dir);
    const added = await daemon.api('POST', '/api/adapters', { name: 'tg-bridge', platform: 'telegram' });
    expect(added.status).toBe(200);
    adapter = added.body.token;
  });
  afterAll(async () => {
    await daemon?.stop();
    rmSync(dir, { recursive: true, force: true });
    rmSync(outside, { recursive: true, force: true });
  });

  it('keeps only a digest of the token, in a file of mode 0600, and lists adapters without it', async () => {
    const file = join(dir, 'data', 'daemon', 'adapters.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const text = readFileSync(file, 'utf8');
    expect(text).not.toContain(adapter);
    expect(text).toContain(createHash('sha256').update(adapter).digest('hex'));
    const listed = await daemon.api('GET', '/api/adapters');
    expect(listed.body).toEqual({ adapters: [{ name: 'tg-bridge', platform: 'telegram', created: expect.any(String) }] });
    const again = await daemon.api('POST', '/api/adapters', { name: 'tg-bridge', platform: 'telegram' });
    expect(again.status).toBe(409);
    // the console's platform is no adapter's: it could vouch for the console's identity
    const consoleAs = (await daemon.api('GET', '/api/status')).body.console.as;
    const theConsoles = await daemon.api('POST', '/api/adapters', { name: 'as-console', platform: consoleAs.platform });
    expect(theConsoles.status).toBe(400);
    expect(theConsoles.body.error.message).toMatch(/is the console's platform/);
  });

  it("takes a turn of its platform, and refuses any turn naming another platform's people or conversations, running nothing", async () => {
    const ok = await daemon.api('POST', '/api/tools/call', { tool: 'list_dir', params: { path: dir }, turn: telegramTurn('tg-1') }, adapter);
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ ok: true });
    // the owner starts a conversation on chat, one with a child, and one named as the bridge's would be;
    // the bridge may act in none of them, not even as a telegram owner
    const target = join(dir, 'from-bridge.txt');
    const owners = (turn: unknown) => daemon.api('POST', '/api/tools/call', { tool: 'list_dir', params: { path: dir }, turn });
    expect((await owners(ownerTurn('chat-1'))).status).toBe(200);
    expect((await owners({ ...ownerTurn('telegram:kid'), session: { id: 'telegram:kid', rootId: 'chat-1' } })).status).toBe(200);
    expect((await owners(ownerTurn('telegram:owner-made'))).status).toBe(200);
    const refusals = [
      ['another platform', { ...ownerTurn('telegram:tg-2') }, /speaks for platform 'telegram' only, and the turn says it came from platform 'chat'/],
      ["another platform's identity", { ...telegramTurn('tg-2'), authorised: CHAT_ALICE }, /the authorised identity is of platform 'chat'/],
      ["another platform's participant", { ...telegramTurn('tg-2'), participants: [CHAT_ALICE] }, /a participant is of platform 'chat'/],
      // found by an attack: a bridge took 'cli' before the owner's first 'aalis chat' and read everything said there
      ["the owner's default conversation", { ...telegramTurn('x'), session: { id: 'cli' } }, /names its conversations 'telegram:<id>', and 'cli' is not one/],
      ["another platform's conversation", { ...telegramTurn('x'), session: { id: 'chat-1' } }, /'chat-1' is not one/],
      ["another platform's conversation as root", { ...telegramTurn('tg-child'), session: { id: 'telegram:tg-child', rootId: 'chat-1' } }, /'chat-1' is not one/],
      // found by an attack: the owner's child named without its root ran in the owner's root (its temp, its settings)
      ["the owner's child, named without its root", telegramTurn('kid'), /conversation 'telegram:kid' is not one of its platform's/],
      ['a conversation of its name the owner began', telegramTurn('owner-made'), /conversation 'telegram:owner-made' is not one of its platform's/],
      ['a starter of another platform', { ...telegramTurn('tg-2'), category: 'continuation', startedBy: ownerTurn('telegram:tg-2') }, /came from platform 'chat'/],
    ] as const;
    for (const [what, turn, message] of refusals) {
      const refused = await daemon.api('POST', '/api/tools/call', { tool: 'write_file', params: { path: target, content: what }, turn }, adapter);
      expect(refused.status, what).toBe(403);
      expect(refused.body.error.code, what).toBe('not-its-platform');
      expect(refused.body.error.message, what).toMatch(message);
      const turned = await daemon.api('POST', '/api/turns', { turn, message: 'hello' }, adapter);
      expect(turned.status, what).toBe(403);
    }
    expect(existsSync(target)).toBe(false);
    // none of the refused turns made or claimed a conversation, nor saw the owner's
    const listed = (await daemon.api('GET', '/api/sessions')).body.sessions.map((s: { id: string; platform: string }) => `${s.id}@${s.platform}`).sort();
    expect(listed).toEqual(['chat-1@chat', 'telegram:owner-made@chat', 'telegram:tg-1@telegram']);
    expect((await daemon.api('GET', '/api/sessions/telegram:kid/messages')).body.messages.map((m: { content: string }) => m.content)).not.toContain('hello');
    // the owner's token is not bound: it may act in the bridge's conversation
    expect((await daemon.api('POST', '/api/tools/call', { tool: 'list_dir', params: { path: dir }, turn: telegramTurn('tg-1') })).status).toBe(200);
  });

  it("answers another platform's conversation as one that does not exist", async () => {
    for (const [method, path] of [
      ['GET', '/api/sessions/chat-1/messages'],
      ['GET', '/api/sessions/chat-1/settings'],
      ['POST', '/api/sessions/chat-1/stop'],
      ['GET', '/api/sessions/telegram:kid/settings'],
    ] as const) {
      const theirs = await daemon.api(method, path, method === 'POST' ? {} : undefined, adapter);
      const none = await daemon.api(method, path.replace(/sessions\/[^/]+/, 'sessions/nobody-at-all'), method === 'POST' ? {} : undefined, adapter);
      expect(theirs.status, path).toBe(404);
      expect(theirs.body.error.message.replace(/'[^']*'/, "''"), path).toBe(none.body.error.message.replace(/'[^']*'/, "''"));
    }
    expect((await daemon.api('GET', '/api/grants?session=chat-1', undefined, adapter)).body).toEqual({ grants: [] });
    expect((await daemon.api('GET', '/api/sessions/telegram:tg-1/settings', undefined, adapter)).status).toBe(200);
  });

  it("refuses the owner's routes", async () => {
    for (const [method, path] of [
      ['GET', '/api/audit'],
      ['GET', '/api/status'],
      ['POST', '/api/console/address'],
      ['POST', '/api/console/pod-capability'],
      ['GET', '/api/adapters'],
      ['POST', '/api/tools/reload'],
    ] as const) {
      const res = await daemon.api(method, path, method === 'POST' ? {} : undefined, adapter);
      expect(res.status, path).toBe(403);
      expect(res.body.error.message, path).toMatch(/adapter 'tg-bridge' may not use/);
    }
    // adding an adapter is the owner's: one adapter cannot mint another, of any platform
    expect((await daemon.api('POST', '/api/adapters', { name: 'mine', platform: 'chat' }, adapter)).status).toBe(403);
  });

  it("sees and answers only its platform's asks, naming an identity of its platform", async () => {
    const stream = await subscribe(daemon.url, adapter);
    const owners = await subscribe(daemon.url, daemon.token);
    try {
      const chatTarget = join(outside, 'chat.txt');
      const chatCall = daemon.api('POST', '/api/tools/call', { tool: 'write_file', params: { path: chatTarget, content: 'chat' }, turn: ownerTurn('chat-ask') });
      const chatAsk = await owners.next('approval/requested');
      // not listed to the bridge, not answerable by it (and not said to be another's)
      const pending = await daemon.api('GET', '/api/approvals/pending', undefined, adapter);
      expect(pending.body.pending.map((p: { code: string }) => p.code)).not.toContain(chatAsk.code);
      const answered = await daemon.api('POST', '/api/approvals/reply', { code: chatAsk.code, decision: 'approve', by: TG_ALICE }, adapter);
      expect(answered.status).toBe(404);
      expect(answered.body.error.code).toBe('unknown-code');
      expect((await daemon.api('GET', '/api/approvals/pending')).body.pending.map((p: { code: string }) => p.code)).toContain(chatAsk.code);

      const tgTarget = join(outside, 'telegram.txt');
      const tgCall = daemon.api('POST', '/api/tools/call', { tool: 'write_file', params: { path: tgTarget, content: 'tg' }, turn: telegramTurn('tg-ask') }, adapter);
      const tgAsk = await stream.next('approval/requested');
      expect(tgAsk.session.id).toBe('telegram:tg-ask');
      // the console's identity is not the bridge's to use: it must say whom it answers for
      const nobody = await daemon.api('POST', '/api/approvals/reply', { code: tgAsk.code, decision: 'approve' }, adapter);
      expect(nobody.status).toBe(400);
      const otherPlatform = await daemon.api('POST', '/api/approvals/reply', { code: tgAsk.code, decision: 'approve', by: CHAT_ALICE }, adapter);
      expect(otherPlatform.status).toBe(403);
      expect((await daemon.api('POST', '/api/approvals/reply', { code: tgAsk.code, decision: 'approve', by: TG_ALICE }, adapter)).status).toBe(200);
      expect((await tgCall).body).toMatchObject({ ok: true });
      expect(readFileSync(tgTarget, 'utf8')).toBe('tg');

      expect((await daemon.api('POST', '/api/approvals/reply', { code: chatAsk.code, decision: 'reject', by: CHAT_ALICE })).status).toBe(200);
      expect((await chatCall).body).toMatchObject({ ok: false });
      // the bridge's stream carried its own ask and nothing of the chat conversation
      const seen = stream.events.filter((e) => e.name !== 'ready');
      expect(seen.length).toBeGreaterThan(0);
      for (const e of seen) expect(JSON.stringify(e.data)).not.toContain('chat-ask');
      // a stream of one conversation of another platform opens as for any name, and carries nothing of it
      const named = await subscribe(daemon.url, adapter, '?session=chat-ask');
      named.close();
    } finally {
      stream.close();
      owners.close();
    }
  });

  it("lists only its platform's conversations and grants, and not every person's last settings", async () => {
    const sessions = await daemon.api('GET', '/api/sessions', undefined, adapter);
    const ids = sessions.body.sessions.map((s: { id: string }) => s.id);
    expect(ids.length).toBeGreaterThan(0);
    expect(ids.every((id: string) => id.startsWith('telegram:') && id !== 'telegram:owner-made')).toBe(true);
    expect(sessions.body.lastUsed).toEqual({});
    expect((await daemon.api('GET', '/api/grants', undefined, adapter)).status).toBe(200);
  });

  it("proves the daemon knows the adapter's token (keyed by its digest), and a removed adapter's token opens nothing", async () => {
    const nonce = randomBytes(16).toString('hex');
    const proof = await daemon.api('GET', `/api/proof?nonce=${nonce}&adapter=tg-bridge`, undefined, null);
    const key = createHash('sha256').update(adapter).digest('hex');
    expect(proof.body.proof).toBe(createHmac('sha256', key).update(`aalis-daemon-proof\0${nonce}\0${proof.body.address}\0${proof.body.port}`).digest('hex'));
    // a name that is no adapter's is answered alike (a proof nobody can check): no one learns which names are
    const nobody = await daemon.api('GET', `/api/proof?nonce=${nonce}&adapter=nobody`, undefined, null);
    expect(nobody.status).toBe(200);
    expect(nobody.body.proof).toMatch(/^[0-9a-f]{64}$/);

    // found by attacks: a removed adapter's open stream went on carrying its conversations, and a
    // call whose headers it sent before the removal ran with the body it sent after
    const streamEnded = new Promise<string>((resolve) => {
      const at = new URL(`${daemon.url}/api/events`);
      const req = request({ host: at.hostname, port: at.port, path: at.pathname, headers: { authorization: `Bearer ${adapter}` } }, (res) => {
        res.on('data', () => {});
        res.on('close', () => resolve('closed'));
        res.on('error', () => resolve('closed'));
      });
      req.on('error', () => resolve('closed'));
      req.end();
    });
    const late = join(dir, 'after-removal.txt');
    const body = JSON.stringify({ tool: 'write_file', params: { path: late, content: 'late' }, turn: telegramTurn('late') });
    const trickled = new Promise<string>((resolve) => {
      const at = new URL(`${daemon.url}/api/tools/call`);
      const req = request({ host: at.hostname, port: at.port, path: at.pathname, method: 'POST', headers: { authorization: `Bearer ${adapter}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
        let text = '';
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve(`answered ${res.statusCode} ${text}`));
        res.on('error', () => resolve('hung up'));
      });
      req.on('error', () => resolve('hung up'));
      req.write(body.slice(0, 10));
      setTimeout(() => req.end(body.slice(10)), 1_000);
    });
    await new Promise((r) => setTimeout(r, 300));
    expect((await daemon.api('POST', '/api/adapters/remove', { name: 'tg-bridge' })).status).toBe(200);
    expect(await streamEnded).toBe('closed');
    expect(await trickled).toBe('hung up');
    expect(existsSync(late)).toBe(false);
    expect((await daemon.api('GET', '/api/tools', undefined, adapter)).status).toBe(401);
    expect((await daemon.api('POST', '/api/adapters/remove', { name: 'tg-bridge' })).status).toBe(404);
  });

  it("'aalis adapter' adds, lists and removes through the running daemon, the token alone on stdout", () => {
    const cli = (...args: string[]) => spawnSync(process.execPath, [BIN, 'adapter', '--dir', dir, ...args], { env: childEnv({}), encoding: 'utf8' });
    const added = cli('add', 'cli-made', '--platform', 'matrix');
    expect(added.status, added.stderr).toBe(0);
    expect(added.stdout).toMatch(/^[A-Za-z0-9_-]{43}\n$/);
    expect(added.stderr).toMatch(/adapter 'cli-made' speaks for platform 'matrix'/);
    expect(cli('list').stdout).toMatch(/^cli-made\tplatform matrix\t/m);
    const twice = cli('add', 'cli-made', '--platform', 'matrix');
    expect(twice.status).toBe(1);
    expect(twice.stderr).toMatch(/exists already[\s\S]*fix: .*--replace/);
    expect(cli('add', 'cli-made').stderr).toMatch(/needs the platform/);
    expect(cli('add', 'Bad Name', '--platform', 'x').stderr).toMatch(/name/);
    // found by an attack: ' telegram' or 'Telegram' matched no identity, and nothing said so
    expect(cli('add', 'spaced', '--platform', ' telegram').stderr).toMatch(/lower-case letters/);
    expect(cli('add', 'upper', '--platform', 'Telegram').stderr).toMatch(/lower-case letters/);
    expect(cli('remove', 'cli-made').status).toBe(0);
    expect(cli('list').stdout).toMatch(/no adapters/);
  });

  // `aalis adapter add … > tg-bridge.token`, as the docs showed it, left the token in a file of
  // mode 0644 (umask 022), readable by every local user (found by an attack).
  it("'aalis adapter add --out FILE' writes the token to a new file of mode 0600, refusing an existing file or a symlink; a token sent to a file others can read is warned of", async () => {
    const cli = (args: string[], stdout: 'pipe' | number = 'pipe') => spawnSync(process.execPath, [BIN, 'adapter', '--dir', dir, ...args], { env: childEnv({}), encoding: 'utf8', stdio: ['ignore', stdout, 'pipe'] });
    const file = join(dir, 'out-bridge.token');
    const made = cli(['add', 'out-bridge', '--platform', 'telegram', '--out', file]);
    expect(made.status, made.stderr).toBe(0);
    expect(made.stdout).toBe('');
    expect(made.stderr).toContain(`its token is in ${file} (mode 0600)`);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const token = readFileSync(file, 'utf8').trim();
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(made.stderr).not.toContain(token);
    // spawnSync held this process's event loop: let the client see the kept-alive connections the daemon closed meanwhile
    await new Promise((r) => setTimeout(r, 100));
    expect((await daemon.api('GET', '/api/tools', undefined, token)).status).toBe(200);

    // onto a file that exists, and through a symlink (to a file there, and to one not yet made): refused, nothing asked or written
    const existing = join(dir, 'existing.token');
    writeFileSync(existing, 'keep\n', { mode: 0o644 });
    const target = join(dir, 'elsewhere.token');
    const link = join(dir, 'link.token');
    symlinkSync(target, link);
    const toExisting = join(dir, 'elsewhere-existing.token');
    writeFileSync(toExisting, 'kept\n');
    const linkToExisting = join(dir, 'link-existing.token');
    symlinkSync(toExisting, linkToExisting);
    for (const [i, onto] of [existing, link, linkToExisting].entries()) {
      const refused = cli(['add', `refused-${i}`, '--platform', 'telegram', '--out', onto]);
      expect(refused.status).toBe(1);
      expect(refused.stdout).toBe('');
      expect(refused.stderr).toMatch(/--out .* was refused, as something is there already \(a file or a symlink\)[\s\S]*fix: name a file that does not exist yet/);
    }
    expect(readFileSync(existing, 'utf8')).toBe('keep\n');
    expect(existsSync(target)).toBe(false);
    expect(readFileSync(toExisting, 'utf8')).toBe('kept\n');
    expect(cli(['list']).stdout).not.toMatch(/refused-/);

    // the token to stdout, stdout a file others can read: warned, with the fix
    const open = join(dir, 'redirected.token');
    const fd = openSync(open, 'w', 0o644);
    fchmodSync(fd, 0o644);
    const redirected = cli(['add', 'redirected', '--platform', 'telegram'], fd);
    closeSync(fd);
    expect(redirected.status, redirected.stderr).toBe(0);
    expect(readFileSync(open, 'utf8')).toMatch(/^[A-Za-z0-9_-]{43}\n$/);
    expect(redirected.stderr).toMatch(/warning: the token went to a file other users can read \(mode 0644\)[\s\S]*fix: chmod 600 that file now, or make the token with --out FILE/);
    // a private file, or a pipe: no warning
    const closed = join(dir, 'private.token');
    const fd2 = openSync(closed, 'w', 0o600);
    const quiet = cli(['add', 'quiet', '--platform', 'telegram'], fd2);
    closeSync(fd2);
    expect(quiet.stderr).not.toMatch(/warning/);
    expect(cli(['add', 'piped', '--platform', 'telegram']).stderr).not.toMatch(/warning/);
    // as root: a file system with no room for the token (found by an attack, h103: a replaced
    // token was revoked and the new one lost, said nowhere) fails with the way out
    if (process.getuid?.() === 0) {
      const full = join(dir, 'full');
      mkdirSync(full);
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4k', 'tmpfs', full]);
      try {
        writeFileSync(join(full, 'filler'), Buffer.alloc(4096));
        const lost = cli(['add', 'out-bridge', '--platform', 'telegram', '--replace', '--out', join(full, 'tg.token')]);
        expect(lost.status).toBe(1);
        expect(lost.stderr).toMatch(/its token could not be written to .*full\/tg\.token[\s\S]*the adapter has no working token now[\s\S]*fix: .*--replace --out FILE/);
      } finally {
        execFileSync('umount', [full]);
      }
    }
  });
});
