import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { spawn, spawnSync } from 'node:child_process';
import { request } from 'node:http';
import { join } from 'node:path';
import { readErrorEnvelope } from '@aalis/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApprovalResolvedEventSchema, ReadyEventSchema, SettingsChangedEventSchema, SettingsViewSchema, ToolOutcomeSchema, ToolsAnswerSchema, TurnAnswerSchema } from './payloads.js';
import { BIN, childEnv, claimConsoleCode, deploymentDir, ownerTurn, type ServeProcess, serveOnce, startServe, subscribe } from './serve-process.testing.js';

const CONFIG = { owners: { chat: ['alice', 'bob'] }, approval: { timeoutMs: 60_000 }, server: { allowedHosts: ['aalis.internal'] } };

describe('aalis serve: a bad config names the file, the field and the expectation', () => {
  const cases = [
    { name: 'a wrong type', config: { owners: { chat: [123] } }, field: 'owners.chat.0', expected: /expected string/ },
    { name: 'an unknown key', config: { ownrs: {} }, field: 'ownrs', expected: /not a known setting; the keys here are: owners, deployment/ },
    { name: 'a bad nested value', config: { approval: { timeoutMs: -1 } }, field: 'approval.timeoutMs', expected: />=10/ },
    { name: 'a bad deployment', config: { deployment: 'cloud' }, field: 'deployment', expected: /host.*docker/ },
    { name: 'not JSON', config: '{ "owners": ', field: '(file)', expected: /not readable JSON/ },
  ];
  it.each(cases)('$name', async ({ config, field, expected }) => {
    const dir = deploymentDir(config);
    try {
      const result = await serveOnce(['--dir', dir, '--port', '0']);
      expect(result.code).toBe(2);
      const file = join(dir, 'aalis.config.json');
      expect(result.stderr).toContain(`${file}: ${field}: `);
      expect(result.stderr).toMatch(expected);
      expect(result.stderr).not.toMatch(/\n\s+at /); // no stack trace
      expect(result.stdout).not.toContain('console:');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('--help answers fully and exits 0', async () => {
    const result = await serveOnce(['--help']);
    expect(result.code).toBe(0);
    for (const flag of ['--dir', '--data', '--port', '--host', '--deployment', '--config']) expect(result.stdout).toContain(flag);
    expect(result.stdout).toContain('SIGINT or SIGTERM');
  });

  it('an unknown flag is a clear error', async () => {
    const result = await serveOnce(['--prot', '1']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/Unknown option '--prot'.*'serve' accepts: --help, --dir, --data, --port/);
  });

  it('a bad flag value lists what is accepted', async () => {
    const result = await serveOnce(['--deployment', 'cloud']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("--deployment 'cloud' is not accepted; use one of: host, docker");
  });

  // each was exit 1, "the daemon did not start", and an empty --host listened on every interface
  it.each([
    [['--port', 'abc'], "--port 'abc' is not a port"],
    [['--port', '99999'], "--port '99999' is not a port"],
    [['--host', ''], "--host '' names no address"],
    [['--dir', '/nonexistent-aalis-dir'], "--dir '/nonexistent-aalis-dir' does not exist"],
  ])('%j is a bad value: exit 2, said before anything starts', async (args, message) => {
    const result = await serveOnce(args);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
    expect(result.stderr).toContain("Run 'aalis serve --help' for the options.");
    expect(result.stdout).not.toMatch(/console: /);
  });
});

describe('aalis serve: the API', () => {
  let dir: string;
  let daemon: ServeProcess;
  let outside: string;

  beforeAll(async () => {
    dir = deploymentDir(CONFIG);
    outside = join(dir, '..', `${dir.split('/').pop()}-outside`);
    mkdirSync(outside, { recursive: true });
    daemon = await startServe(dir);
  });
  afterAll(async () => {
    await daemon?.stop();
    rmSync(dir, { recursive: true, force: true });
    rmSync(outside, { recursive: true, force: true });
  });

  it('prints progress for the long steps on stderr', () => {
    expect(daemon.stderr()).toContain('probing the linux sandbox');
    expect(daemon.stderr()).toContain('starting plugins');
    expect(daemon.stderr()).toContain(`config: ${join(dir, 'aalis.config.json')}`);
  });

  it('refuses a request without the token, or with a wrong one, with 401 and a JSON error', async () => {
    for (const token of [null, 'wrong-token', `${daemon.token}x`]) {
      const res = await daemon.api('GET', '/api/approvals/pending', undefined, token);
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('unauthorized');
      expect(res.body.error.message).toContain('Authorization: Bearer');
    }
    const events = await fetch(`${daemon.url}/api/events`);
    expect(events.status).toBe(401);
    expect((await daemon.api('GET', '/api/approvals/pending')).status).toBe(200);
  });

  // The console's address printed at start held the token itself, kept by a browser's history and
  // a service's journal as long as the daemon ran: it now holds a code that opens the console once.
  it('prints no token: the console address holds a one-time code, claimed once, then refused with what to do', async () => {
    // stdout is a pipe here (a log would keep a live code): the address is printed without one
    expect(daemon.stdout()).toMatch(/^console: http:\/\/127\.0\.0\.1:\d+\/console$/m);
    expect(daemon.stdout() + daemon.stderr()).not.toContain(daemon.token);
    expect(daemon.stderr()).toContain("'aalis console' prints an address that opens it");
    const address = await daemon.consoleAddress();
    expect(address).not.toContain(daemon.token);
    const code = address.slice(address.indexOf('#code=') + 6);
    expect(await claimConsoleCode(daemon.url, code)).toBe(daemon.token);
    const again = await fetch(`${daemon.url}/api/console/claim`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: code.split('.')[0], for: 'console' }) });
    expect(again.status).toBe(401);
    const error = readErrorEnvelope(await again.json());
    expect(error?.message).toContain('was used already');
    expect(error?.fix).toContain("aalis console");
    // a malformed id is named, a GET is refused, and an address needs the token
    const bad = await fetch(`${daemon.url}/api/console/claim`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: 'x', for: 'console' }) });
    expect(bad.status).toBe(400);
    expect(readErrorEnvelope(await bad.json())?.message).toContain('id');
    expect((await fetch(`${daemon.url}/api/console/claim`)).status).toBe(405);
    expect((await daemon.api('POST', '/api/console/address', undefined, null)).status).toBe(401);
  });

  // a page of another origin that opened the console or the panel kept a handle that could set its address
  it('serves the console and the pod panel with Cross-Origin-Opener-Policy same-origin', async () => {
    for (const path of ['/console', '/pod']) {
      const res = await fetch(`${daemon.url}${path}`);
      expect(res.headers.get('cross-origin-opener-policy')).toBe('same-origin');
      await res.body?.cancel();
    }
  });

  // a token fixed by AALIS_TOKEN outlives the daemon: the tab's storage would hand it to whatever
  // serves the port next, after a reload (found by an attack)
  it('tells the console not to keep a token fixed by AALIS_TOKEN', async () => {
    const other = await startServe(deploymentDir(CONFIG), [], { AALIS_TOKEN: 'a-fixed-token-of-at-least-32-characters' });
    try {
      const address = await other.consoleAddress();
      const res = await fetch(`${other.url}/api/console/claim`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: address.split('#code=')[1]!.split('.')[0], for: 'console' }) });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { keep: boolean }).keep).toBe(false);
    } finally {
      await other.stop();
    }
    const mine = await daemon.consoleAddress();
    const res = await fetch(`${daemon.url}/api/console/claim`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: mine.split('#code=')[1]!.split('.')[0], for: 'console' }) });
    expect(((await res.json()) as { keep: boolean }).keep).toBe(true);
  });

  // At a terminal the address printed holds a code; it opens the console for whoever has it,
  // so a log never gets one (the test above). Run under script(1) for a terminal.
  it.skipIf(!existsSync('/usr/bin/script'))('prints an address with a one-time code when stdout is a terminal, at a loopback address even for --host localhost', async () => {
    const other = deploymentDir(CONFIG);
    const child = spawn('/usr/bin/script', ['-qfec', `"${process.execPath}" "${BIN}" serve --dir "${other}" --port 0 --host localhost`, '/dev/null'], { env: childEnv({}), stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    try {
      await expect.poll(() => out, { timeout: 45_000 }).toMatch(/console: http:\/\/(?:127\.0\.0\.1|\[::1\]):\d+\/console#code=[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}/);
      expect(out).toContain('opens the console once, within 30 minutes');
      const printed = /console: (\S+)\/console#code=(\S+)/.exec(out)!;
      const token = readFileSync(join(other, 'data', 'daemon', 'token'), 'utf8').trim();
      expect(out).not.toContain(token);
      expect(await claimConsoleCode(printed[1]!, printed[2]!.trim())).toBe(token);
    } finally {
      child.kill('SIGTERM');
      spawnSync('pkill', ['-TERM', '-f', `serve --dir ${other} `]);
      await new Promise((r) => child.on('exit', r));
      rmSync(other, { recursive: true, force: true });
    }
  }, 90_000);

  // A page whose DNS name was made to resolve to 127.0.0.1 read /healthz and the console's page
  // (found by an attack): a Host that is not an address, localhost or a listed name gets nothing.
  it('answers a request whose Host is another name (DNS rebinding) with 403 and nothing else, even with the token', async () => {
    const { hostname, port } = new URL(daemon.url);
    const get = (path: string, host: string) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = request({ host: hostname, port, path, headers: { host, authorization: `Bearer ${daemon.token}` } }, (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (d: string) => {
            body += d;
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        });
        req.on('error', reject);
        req.end();
      });
    for (const path of ['/healthz', '/console', '/pod', '/api/approvals/pending']) {
      const res = await get(path, `evil.example:${port}`);
      expect(res.status, path).toBe(403);
      expect(readErrorEnvelope(JSON.parse(res.body))).toMatchObject({ code: 'forbidden', message: expect.stringContaining('DNS rebinding') });
    }
    expect((await get('/healthz', `localhost:${port}`)).status).toBe(200);
    expect((await get('/api/approvals/pending', `127.0.0.1:${port}`)).status).toBe(200);
    // a name the config lists (server.allowedHosts)
    expect((await get('/api/approvals/pending', `AALIS.internal:${port}`)).status).toBe(200);
  });

  it("sets no cookie anywhere; the pod's API refuses the old token cookie and takes a capability that opens only the pod", async () => {
    for (const path of ['/console', '/pod', '/healthz', '/api/status', '/api/pod/settings']) {
      const res = await fetch(`${daemon.url}${path}`, { headers: { authorization: `Bearer ${daemon.token}` } });
      expect(res.headers.get('set-cookie')).toBeNull();
      await res.body?.cancel();
    }
    const cookie = await fetch(`${daemon.url}/api/pod/settings`, { headers: { cookie: `aalis_token=${encodeURIComponent(daemon.token)}` } });
    expect(cookie.status).toBe(401);
    expect(((await cookie.json()) as { error: { message: string } }).error.message).toContain('cookies are not accepted');
    const pass = await daemon.api('POST', '/api/console/pod-capability');
    expect(pass.status).toBe(200);
    expect(pass.body.capability).not.toContain(daemon.token);
    expect((await daemon.api('GET', '/api/pod/settings', undefined, pass.body.capability)).status).toBe(200);
    expect((await daemon.api('GET', '/api/status', undefined, pass.body.capability)).status).toBe(401);
    expect((await daemon.api('POST', '/api/console/pod-capability', undefined, pass.body.capability)).status).toBe(401);
    // the panel's address holds a one-time code for that capability, never the capability
    expect(pass.body.address).toMatch(/^\/pod#code=[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}$/);
    expect(pass.body.address).not.toContain(pass.body.capability);
    // a code is for one page: claimed for the console it is refused (409) and stays live for the panel
    const podCode = pass.body.address.slice('/pod#code='.length);
    const elsewhere = await fetch(`${daemon.url}/api/console/claim`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: podCode.split('.')[0], for: 'console' }) });
    expect(elsewhere.status).toBe(409);
    expect(readErrorEnvelope(await elsewhere.json())?.message).toContain("for the Isolation Pod's panel (/pod), not the console (/console); it was not spent");
    expect(await claimConsoleCode(daemon.url, podCode, 'pod')).toBe(pass.body.capability);
  });

  it("GET /api/tools publishes each tool's parameters as JSON Schema, and the answers and events have DAEMON.md's shapes", async () => {
    const listed = await daemon.api('GET', '/api/tools');
    const { tools } = ToolsAnswerSchema.strict().parse(listed.body);
    const run = tools.find((t) => t.name === 'run_command');
    expect(run?.parameters).toMatchObject({ type: 'object', properties: { command: expect.any(Object) }, required: expect.arrayContaining(['command']) });
    for (const tool of tools) expect(tool.parameters.$schema).toBe('https://json-schema.org/draft/2020-12/schema');

    const stream = await subscribe(daemon.url, daemon.token, '?session=chat-shapes');
    try {
      expect(ReadyEventSchema.strict().parse(stream.events[0]?.data)).toMatchObject({ session: 'chat-shapes' });
      TurnAnswerSchema.strict().parse((await daemon.api('POST', '/api/turns', { turn: ownerTurn('chat-shapes'), message: 'hi' })).body);
      SettingsViewSchema.strict().parse((await daemon.api('POST', '/api/sessions/chat-shapes/settings', { boundary: 'deny' })).body);
      SettingsChangedEventSchema.strict().parse(await stream.next('session/settings-changed'));
      expect((await daemon.api('POST', '/api/sessions/chat-shapes/settings', { boundary: 'ask' })).status).toBe(200);
      const call = daemon.api('POST', '/api/tools/call', { tool: 'run_command', params: { command: `echo x > ${outside}/shapes.txt` }, turn: ownerTurn('chat-shapes') });
      const { code } = await stream.next('approval/requested');
      expect((await daemon.api('POST', '/api/approvals/reply', { code, decision: 'reject', by: { platform: 'chat', userId: 'alice' } })).status).toBe(200);
      expect(ToolOutcomeSchema.parse((await call).body)).toMatchObject({ ok: false, kind: 'denied' });
      expect(ApprovalResolvedEventSchema.strict().parse(await stream.next('approval/resolved'))).toMatchObject({ outcome: { outcome: 'rejected' }, via: 'human' });
    } finally {
      stream.close();
    }
  });

  it('refuses a bad body with 400 naming the field, and an unknown route with 404', async () => {
    const bad = await daemon.api('POST', '/api/tools/call', { tool: 'run_command', params: {}, turn: { session: {} } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('invalid-body');
    expect(bad.body.error.message).toMatch(/turn\.session\.id/);
    const missing = await daemon.api('GET', '/api/nothing');
    expect(missing.status).toBe(404);
    const method = await daemon.api('GET', '/api/tools/call');
    expect(method.status).toBe(405);
    expect(method.body.error.message).toContain('use POST');
    // One envelope for every server: core's { error: { code, message, fix? } }, read back by the clients.
    for (const answer of [bad, missing, method]) {
      expect(Object.keys(answer.body)).toEqual(['error']);
      expect(readErrorEnvelope(answer.body)).toEqual(answer.body.error);
    }
  });

  it("measures its event loop over a window a client starts, and only then (GET/POST /api/status/event-loop)", async () => {
    const before = await daemon.api('GET', '/api/status/event-loop');
    expect(before.status).toBe(200);
    expect(before.body).toMatchObject({ watching: false, sinceMs: 0 });
    expect((await daemon.api('POST', '/api/status/event-loop')).body).toMatchObject({ watching: true });
    // a command through the whole call path, measured by the window
    const ran = await daemon.api('POST', '/api/tools/call', { tool: 'run_command', params: { command: 'true', network: 'off' }, turn: ownerTurn('loop-window') });
    expect(ran.body.ok).toBe(true);
    const after = await daemon.api('GET', '/api/status/event-loop');
    expect(after.body.watching).toBe(true);
    expect(after.body.sinceMs).toBeGreaterThan(0);
    expect(after.body.maxMs).toBeGreaterThanOrEqual(after.body.p99Ms);
    expect((await daemon.api('DELETE', '/api/status/event-loop')).status).toBe(405);
    expect((await daemon.api('GET', '/api/status/event-loop', undefined, null)).status).toBe(401);
  });

  it('a write outside the workspace is asked, shows as pending and as an SSE event, is approved by code, and the call finishes', async () => {
    const target = join(outside, 'approved.txt');
    const stream = await subscribe(daemon.url, daemon.token);
    try {
      const turn = ownerTurn('chat-approve');
      const call = daemon.api('POST', '/api/tools/call', { tool: 'run_command', params: { command: `echo from-the-sandbox > ${target}` }, turn });
      const requested = await stream.next('approval/requested', (e) => e.session.id === 'chat-approve');
      // A new file is a write to its directory: that is what the sandbox refused and what is asked.
      expect(requested.subject).toMatchObject({ kind: 'write-path', path: outside, rule: 'boundary' });
      expect(existsSync(target)).toBe(false); // the read-only first run was refused

      const pending = await daemon.api('GET', '/api/approvals/pending?session=chat-approve');
      expect(pending.body.pending).toEqual([expect.objectContaining({ code: requested.code, session: 'chat-approve', subject: requested.subject })]);
      expect(pending.body.pending[0].running).toEqual([expect.objectContaining({ tool: 'run_command', summary: `run_command echo from-the-sandbox > ${target}` })]);

      const stranger = await daemon.api('POST', '/api/approvals/reply', { code: requested.code, decision: 'approve', by: { platform: 'chat', userId: 'mallory' } });
      expect(stranger.status).toBe(403);
      expect(stranger.body.error.code).toBe('not-owner');

      const reply = await daemon.api('POST', '/api/approvals/reply', { code: requested.code, decision: 'approve', by: { platform: 'chat', userId: 'alice' } });
      expect(reply.status).toBe(200);
      expect(reply.body.outcome.outcome).toBe('approved');
      const resolved = await stream.next('approval/resolved', (e) => e.id === requested.id);
      expect(resolved).toMatchObject({ via: 'human', outcome: { outcome: 'approved' } });

      const result = await call;
      expect(result.status).toBe(200);
      expect(result.body).toMatchObject({ ok: true, value: { where: 'sandbox', exitCode: 0, grantedWrites: [outside] } });
      expect(readFileSync(target, 'utf8')).toBe('from-the-sandbox\n');

      const again = await daemon.api('POST', '/api/approvals/reply', { code: requested.code, decision: 'approve', by: { platform: 'chat', userId: 'alice' } });
      expect(again.status).toBe(409);
      const audit = await daemon.api('GET', '/api/audit?session=chat-approve');
      expect(audit.body.records.map((r: { event: string }) => r.event)).toEqual(['requested', 'reply-refused', 'resolved']);
    } finally {
      stream.close();
    }
  });

  it('a rejected ask ends the call with the reason and nothing written', async () => {
    const target = join(outside, 'rejected.txt');
    const stream = await subscribe(daemon.url, daemon.token, '?session=chat-reject');
    try {
      const call = daemon.api('POST', '/api/tools/call', { tool: 'run_command', params: { command: `echo no > ${target}` }, turn: ownerTurn('chat-reject') });
      const requested = await stream.next('approval/requested');
      const reply = await daemon.api('POST', '/api/approvals/reply', { code: requested.code, decision: 'reject', reason: 'not there', by: { platform: 'chat', userId: 'alice' } });
      expect(reply.status).toBe(200);
      const result = await call;
      expect(result.body).toMatchObject({ ok: false, kind: 'denied' });
      expect(result.body.message).toContain('not there');
      expect(existsSync(target)).toBe(false);
    } finally {
      stream.close();
    }
  });

  it('a remembered grant answers the next ask by itself, is listed, and is revoked', async () => {
    const target = join(outside, 'remembered.txt');
    const stream = await subscribe(daemon.url, daemon.token, '?session=chat-grant');
    try {
      const turn = ownerTurn('chat-grant');
      const first = daemon.api('POST', '/api/tools/call', { tool: 'run_command', params: { command: `echo 1 > ${target}` }, turn });
      const requested = await stream.next('approval/requested');
      expect((await daemon.api('POST', '/api/approvals/reply', { code: requested.code, decision: 'approve-remember', by: turn.authorised })).status).toBe(200);
      expect((await first).body.ok).toBe(true);
      const grants = await daemon.api('GET', '/api/grants?session=chat-grant');
      expect(grants.body.grants).toEqual([expect.objectContaining({ session: 'chat-grant', scope: { kind: 'write-path', rule: 'boundary', target: outside } })]);
      // Another new file in the same directory: the same write, so the grant answers it.
      const second = await daemon.api('POST', '/api/tools/call', { tool: 'run_command', params: { command: `echo 2 > ${target}-2` }, turn });
      expect(second.body.ok).toBe(true);
      expect(readFileSync(`${target}-2`, 'utf8')).toBe('2\n');
      expect(stream.events.filter((e) => e.name === 'approval/requested')).toHaveLength(1);
      const revoked = await daemon.api('POST', '/api/grants/revoke', { id: grants.body.grants[0].id });
      expect(revoked.status).toBe(200);
      expect((await daemon.api('GET', '/api/grants?session=chat-grant')).body.grants).toEqual([]);
      expect((await daemon.api('POST', '/api/grants/revoke', { id: grants.body.grants[0].id })).status).toBe(404);
    } finally {
      stream.close();
    }
  });

  it("a sandboxed command cannot reach the daemon's own port", async () => {
    const port = new URL(daemon.url).port;
    const probe = (host: string) =>
      `require('net').connect(${port}, '${host}').on('connect', () => { console.log('reached'); process.exit(0); }).on('error', (e) => { console.log('refused ' + e.code); process.exit(0); })`;
    // In the sandbox, 127.0.0.1 is its own loopback; the host's is slirp's gateway 10.0.2.2.
    for (const host of ['127.0.0.1', '10.0.2.2']) {
      const result = await daemon.api('POST', '/api/tools/call', { tool: 'run_command', params: { command: [process.execPath, '-e', probe(host)], network: 'on' }, turn: ownerTurn('chat-port') });
      expect(result.body.ok).toBe(true);
      expect(result.body.value.stdout).toMatch(/^refused /);
    }
    // The same probe from here does reach it: the refusal above is the sandbox's.
    const { execFileSync } = await import('node:child_process');
    expect(execFileSync(process.execPath, ['-e', probe('127.0.0.1')], { encoding: 'utf8' })).toBe('reached\n');
  });

  it("one person's last used settings are never another's starting point, and a settings change to an unknown conversation is 404", async () => {
    const open = async (session: string, userId: string) => (await daemon.api('POST', '/api/turns', { turn: ownerTurn(session, userId) })).body;
    expect((await open('scope-alice-1', 'alice')).settings.tier).toBe('workspace');
    expect((await daemon.api('POST', '/api/sessions/scope-alice-1/settings', { tier: 'full', by: { platform: 'chat', userId: 'alice' } })).status).toBe(200);
    // Another owner's, and a non-owner's, new conversations start from their own (the defaults).
    expect(await open('scope-bob-1', 'bob')).toMatchObject({ principal: 'owner', settings: { tier: 'workspace' } });
    expect(await open('scope-mallory-1', 'mallory')).toMatchObject({ principal: 'other', settings: { tier: 'workspace' } });
    // A tool call's new conversation too: mallory's command runs in the sandbox, not on the host.
    const call = await daemon.api('POST', '/api/tools/call', { tool: 'run_command', params: { command: 'echo hi' }, turn: ownerTurn('scope-mallory-2', 'mallory') });
    expect((await daemon.api('GET', '/api/sessions/scope-mallory-2/settings')).body.settings.tier).toBe('workspace');
    expect(call.body.value?.where ?? call.body.kind).not.toBe('host');
    // The person who chose full gets it again in their next conversation.
    expect((await open('scope-alice-2', 'alice')).settings.tier).toBe('full');
    const lastUsed = (await daemon.api('GET', '/api/sessions')).body.lastUsed;
    expect(lastUsed['chat:alice'].tier).toBe('full');
    expect(lastUsed['chat:bob']).toBeUndefined();
    // The settings become the last used of whoever changed them, not of whoever started the
    // conversation: bob (an owner) raising mallory's, or the console raising bob's, starts nobody
    // else's next conversation raised.
    expect((await daemon.api('POST', '/api/sessions/scope-mallory-1/settings', { tier: 'full', approver: 'none', by: { platform: 'chat', userId: 'bob' } })).status).toBe(200);
    expect((await open('scope-bob-2', 'bob')).settings).toMatchObject({ tier: 'full', approver: 'none' });
    expect(await open('scope-mallory-3', 'mallory')).toMatchObject({ principal: 'other', settings: { tier: 'workspace' } });
    expect((await daemon.api('POST', '/api/sessions/scope-bob-2/settings', { tier: 'readonly' })).status).toBe(200);
    expect((await open('scope-bob-3', 'bob')).settings.tier).toBe('full');
    const after = (await daemon.api('GET', '/api/sessions')).body.lastUsed;
    expect(after['chat:mallory']).toBeUndefined();
    expect(after['chat:bob'].tier).toBe('full');
    expect(Object.values(after).filter((s) => (s as { tier: string }).tier === 'readonly')).toHaveLength(1);

    for (const [method, body] of [['POST', { tier: 'full' }], ['GET', undefined]] as const) {
      const unknown = await daemon.api(method, '/api/sessions/never-opened/settings', body);
      expect(unknown.status).toBe(404);
      expect(unknown.body.error.code).toBe('not-found');
      expect(unknown.body.error.message).toContain("no conversation 'never-opened'");
    }
    expect((await daemon.api('GET', '/api/sessions')).body.sessions.map((s: { id: string }) => s.id)).not.toContain('never-opened');
    // Nor did the refused change become anybody's last used settings.
    expect((await daemon.api('GET', '/api/sessions')).body.lastUsed).toEqual(after);
  });

  it('refuses approvedBy from an adapter with 400, in a turn and in the turn that started it; nothing runs', async () => {
    const alice = { platform: 'chat', userId: 'alice' };
    const marker = join(dir, 'data', 'workspace', 'approved-by-adapter.txt');
    const mallory = ownerTurn('chat-vouch', 'mallory');
    const turns = [
      { ...mallory, approvedBy: alice },
      { ...mallory, category: 'continuation', startedBy: { ...ownerTurn('chat-vouch', 'mallory'), approvedBy: alice } },
    ];
    const paths = ['turn.approvedBy', 'turn.startedBy.approvedBy'];
    for (const [i, turn] of turns.entries()) {
      const call = await daemon.api('POST', '/api/tools/call', { tool: 'run_command', params: { command: `echo ran > ${marker}` }, turn });
      expect(call.status).toBe(400);
      expect(call.body.error.code).toBe('invalid-body');
      expect(call.body.error.message).toContain(`${paths[i]}: only the daemon sets this`);
      const opened = await daemon.api('POST', '/api/turns', { turn });
      expect(opened.status).toBe(400);
      expect(opened.body.error.message).toContain(paths[i]);
    }
    expect(existsSync(marker)).toBe(false);
    expect((await daemon.api('GET', '/api/sessions/chat-vouch/settings')).status).toBe(404);
  });

  it("settings change through the kernel's rules: plan forces readonly, raising the tier in plan is refused with 409", async () => {
    const stream = await subscribe(daemon.url, daemon.token, '?session=chat-settings');
    try {
      // reply: false: only recorded, so no agent turn runs while the run mode is switched below.
      const turn = await daemon.api('POST', '/api/turns', { turn: ownerTurn('chat-settings'), message: 'hello', reply: false });
      expect(turn.body).toMatchObject({ session: 'chat-settings', principal: 'owner' });
      const plan = await daemon.api('POST', '/api/sessions/chat-settings/settings', { runMode: 'plan' });
      expect(plan.status).toBe(200);
      expect(plan.body.settings).toMatchObject({ runMode: 'plan', tier: 'readonly' });
      const changed = await stream.next('session/settings-changed');
      expect(changed.next.tier).toBe('readonly');
      const refused = await daemon.api('POST', '/api/sessions/chat-settings/settings', { tier: 'full' });
      expect(refused.status).toBe(409);
      expect(refused.body.error.code).toBe('plan-locks-tier');
      expect((await daemon.api('GET', '/api/sessions/chat-settings/settings')).body.settings.tier).toBe('readonly');
      const alias = await daemon.api('POST', '/api/sessions/chat-settings/settings', { runMode: 'execute', tier: 'workspace-write' });
      expect(alias.body.settings).toMatchObject({ runMode: 'execute', tier: 'workspace' });
      const bad = await daemon.api('POST', '/api/sessions/chat-settings/settings', { colour: 'red' });
      expect(bad.status).toBe(400);
      expect(bad.body.error.message).toContain('colour');
      const listed = await daemon.api('GET', '/api/sessions');
      expect(listed.body.sessions.map((s: { id: string }) => s.id)).toContain('chat-settings');
    } finally {
      stream.close();
    }
  });
});

function processesWith(marker: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(marker)) found.push(Number(entry));
    } catch {
      // the process ended meanwhile
    }
  }
  return found;
}

describe('aalis serve: SIGTERM stops cleanly', () => {
  it('kills running commands (sandboxed and on the host), ends a pending ask with its call (cancelled) in the audit log, and exits 0', async () => {
    const dir = deploymentDir(CONFIG);
    const outside = `${dir}-outside`;
    mkdirSync(outside);
    let daemon: ServeProcess | undefined;
    const marker = `aalis-stop-marker-${process.pid}-${Date.now()}`;
    try {
      daemon = await startServe(dir);
      const stream = await subscribe(daemon.url, daemon.token);
      // A host command (tier full) has no abort of its own: the stop kills it all the same. Each
      // conversation's tier is set first, as a new one would inherit the last used settings.
      const hostMarker = `${marker}-host`;
      for (const [session, tier] of [['chat-stop-host', 'full'], ['chat-stop-run', 'workspace'], ['chat-stop-ask', 'workspace']]) {
        expect((await daemon.api('POST', '/api/turns', { turn: ownerTurn(session as string) })).status).toBe(200);
        expect((await daemon.api('POST', `/api/sessions/${session}/settings`, { tier })).status).toBe(200);
      }
      const running = daemon.api('POST', '/api/tools/call', { tool: 'run_command', params: { command: `sleep 300; echo ${marker}` }, turn: ownerTurn('chat-stop-run') });
      const asking = daemon.api('POST', '/api/tools/call', { tool: 'run_command', params: { command: `echo x > ${outside}/never.txt` }, turn: ownerTurn('chat-stop-ask') });
      const onHost = daemon.api('POST', '/api/tools/call', { tool: 'run_command', params: { command: `sleep 300; echo ${hostMarker}` }, turn: ownerTurn('chat-stop-host') });
      const requested = await stream.next('approval/requested');
      // both commands run (a sandbox start on a loaded machine took more than the 10 s once given)
      await until(() => processesWith(marker).length > 0 && processesWith(hostMarker).length > 0, 'both commands run');

      expect(await daemon.stop('SIGTERM')).toBe(0);
      expect(daemon.stderr()).toContain('SIGTERM received');
      // killed: gone once the kernel has reaped them (the sleeps would run 300 s otherwise)
      await until(() => processesWith(marker).length === 0 && processesWith(hostMarker).length === 0, 'the commands are gone');
      expect((await onHost).body).toMatchObject({ ok: true, value: { where: 'host', signal: 'SIGKILL' } });
      const ran = await running;
      expect(ran.body).toMatchObject({ ok: true, value: { signal: 'SIGKILL', exitCode: null } });
      const asked = await asking;
      expect(asked.body.ok).toBe(false);
      expect(existsSync(join(outside, 'never.txt'))).toBe(false);

      const audit = readFileSync(join(dir, 'data', 'approval', 'audit.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      expect(audit).toContainEqual(expect.objectContaining({ event: 'resolved', id: requested.id, outcome: 'rejected', via: 'cancelled', reason: expect.stringMatching(/ended before an answer \(the daemon received SIGTERM\)/) }));
      stream.close();
    } finally {
      daemon?.child.kill('SIGKILL');
      // A failed run must not leave its commands behind.
      for (const pid of processesWith(marker)) process.kill(pid, 'SIGKILL');
      rmSync(dir, { recursive: true, force: true });
      rmSync(outside, { recursive: true, force: true });
    }
  }, 180_000); // a daemon start (up to 45 s on a loaded machine), three calls and a stop
});

/** Resolves once `check` holds; throws naming `what` after 60 s (a limit that only decides how long a failure takes). */
async function until(check: () => boolean, what: string): Promise<void> {
  const end = Date.now() + 60_000;
  while (!check()) {
    if (Date.now() > end) throw new Error(`${what}: not within 60 s`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
