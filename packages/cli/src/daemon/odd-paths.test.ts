// Paths no file can have, sent through the daemon's HTTP API (a real `aalis serve`): a NUL byte, a
// lone UTF-16 surrogate (JSON carries it; it has no UTF-8 form), bytes that are not UTF-8, a name
// past NAME_MAX, a path past PATH_MAX. Each is refused as the parameter it came in, by its rule,
// with what to do, and nothing is written. Before, a NUL came back as Node's argument-check text,
// a long name as the raw ENAMETOOLONG of realpath, a long cwd as "the sandbox cannot run this
// command: see aalis doctor", and a lone surrogate or a byte that is not UTF-8 was written as
// U+FFFD under a name the client never sent.
import { readdirSync, rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deploymentDir, type Json, ownerTurn, type ServeProcess, startServe } from './serve-process.testing.js';

let dir: string;
let daemon: ServeProcess;
let ws: string;
const turn = ownerTurn('chat-odd-paths');
const call = async (tool: string, params: unknown): Promise<Json> => {
  const answer = await daemon.api('POST', '/api/tools/call', { tool, params, turn });
  expect(answer.status).toBe(200);
  return answer.body;
};

beforeAll(async () => {
  dir = deploymentDir({ owners: { chat: ['alice'] } });
  daemon = await startServe(dir);
  const pwd = await call('run_command', { command: 'pwd' });
  ws = String(pwd.value.stdout).trim();
}, 120_000);
afterAll(async () => {
  await daemon?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const refusal = (param: string, rule: string, why: RegExp) => ({ ok: false, kind: 'denied', message: expect.stringMatching(new RegExp(`^'${param}' was refused \\(rule: ${rule}\\): ${why.source}.*Fix: `)) });

describe('paths no file can have, through the API', () => {
  it('a NUL byte: refused by rule in every tool that takes a path or a cwd, never the runtime text', { timeout: 120_000 }, async () => {
    const nul = `${ws}/a\u0000b`;
    const why = /the path '.*a\\0b' holds a NUL byte/;
    expect(await call('read_file', { path: nul })).toEqual(refusal('path', 'bad-path', why));
    expect(await call('write_file', { path: nul, content: 'x' })).toEqual(refusal('path', 'bad-path', why));
    expect(await call('list_dir', { path: nul })).toEqual(refusal('path', 'bad-path', why));
    expect(await call('move_path', { from: `${ws}/none`, to: nul })).toEqual(refusal('to', 'bad-path', why));
    expect(await call('run_command', { command: 'pwd', cwd: nul })).toEqual(refusal('cwd', 'bad-path', why));
  });

  it('a lone surrogate is refused, not written as U+FFFD under another name', { timeout: 120_000 }, async () => {
    for (const name of ['s\ud800.txt', 's\udc80.txt']) {
      expect(await call('write_file', { path: `${ws}/${name}`, content: 'x' })).toEqual(refusal('path', 'bad-path', /the path '.*' is not well-formed Unicode/));
    }
    expect(await call('run_command', { command: 'pwd', cwd: `${ws}/d\ud800` })).toEqual(refusal('cwd', 'bad-path', /the path '.*' is not well-formed Unicode/));
    expect(readdirSync(ws).filter((n) => n.startsWith('s'))).toEqual([]);
    // a well-formed name with U+FFFD in it is a name like any other
    expect(await call('write_file', { path: `${ws}/r\ufffd.txt`, content: 'x' })).toMatchObject({ ok: true });
  });

  it('a body that is not UTF-8 is refused whole (400), nothing written', { timeout: 60_000 }, async () => {
    const body = Buffer.concat([Buffer.from(`{"tool":"write_file","params":{"path":"${ws}/raw-`), Buffer.from([0xff, 0xfe]), Buffer.from(`.txt","content":"x"},"turn":${JSON.stringify(turn)}}`)]);
    const res = await fetch(`${daemon.url}/api/tools/call`, { method: 'POST', headers: { authorization: `Bearer ${daemon.token}`, 'content-type': 'application/json' }, body });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: { code: 'invalid-body', message: expect.stringMatching(/the body is not UTF-8/) } });
    expect(readdirSync(ws).filter((n) => n.startsWith('raw-'))).toEqual([]);
  });

  it('a name past NAME_MAX and a path past PATH_MAX: refused as too long, the cwd too (not "see aalis doctor")', { timeout: 120_000 }, async () => {
    const longName = `${ws}/${'n'.repeat(300)}`;
    const nameWhy = /the path '.*' is too long: one of its names is longer than the system takes/;
    expect(await call('write_file', { path: longName, content: 'x' })).toEqual(refusal('path', 'path-too-long', nameWhy));
    expect(await call('read_file', { path: longName })).toEqual(refusal('path', 'path-too-long', nameWhy));
    expect(await call('run_command', { command: 'pwd', cwd: longName })).toEqual(refusal('cwd', 'path-too-long', nameWhy));
    const deep = `${ws}/${Array.from({ length: 40 }, () => 'd'.repeat(120)).join('/')}`;
    const deepWhy = /the path '.*' is too long: it is \d+ bytes long, over PATH_MAX \(4096\)/;
    expect(await call('list_dir', { path: deep })).toEqual(refusal('path', 'path-too-long', deepWhy));
    expect(await call('write_file', { path: `${deep}/f.txt`, content: 'x' })).toEqual(refusal('path', 'path-too-long', deepWhy));
    expect(await call('run_command', { command: 'pwd', cwd: deep })).toEqual(refusal('cwd', 'path-too-long', deepWhy));
    expect(readdirSync(ws).filter((n) => n.startsWith('n') || n.startsWith('d'))).toEqual([]);
  });

  // Conversation ids name files and folders by their UTF-8 form (the stored conversation, the
  // session temp): two ids differing only in a lone surrogate had one form, so they shared both.
  it('a conversation id or an identity that is not well-formed Unicode is refused (400), nothing run or stored', { timeout: 60_000 }, async () => {
    for (const [route, body] of [
      ['/api/tools/call', { tool: 'run_command', params: { command: 'touch lone-id-ran' }, turn: ownerTurn('g\ud800') }],
      ['/api/turns', { turn: ownerTurn('g\udc00'), message: 'hello', reply: false }],
      ['/api/turns', { turn: { ...ownerTurn('g-fine'), session: { id: 'g-fine', rootId: 'r\udfff' } }, message: 'hello', reply: false }],
      ['/api/tools/call', { tool: 'run_command', params: { command: 'touch lone-id-ran' }, turn: ownerTurn('g-fine', 'alice\ud83d') }],
    ] as const) {
      const answer = await daemon.api('POST', route, body);
      expect(answer.status).toBe(400);
      expect(answer.body).toEqual({ error: { code: 'invalid-body', message: expect.stringMatching(/turn\.(session\.(id|rootId)|speaker\.userId|authorised\.userId).*is not well-formed Unicode/) } });
    }
    expect(readdirSync(ws).filter((n) => n.startsWith('lone-id'))).toEqual([]);
  });

  // Ids are stored with their conversation, listed by GET /api/sessions and sent with every event:
  // thirty calls with ids of a megabyte grew the data directory by 66 MB and stalled /healthz, and
  // an id with a right-to-left override read as another (found by an attack). One rule: idProblem.
  it('a conversation id or an identity over 256 bytes, or holding a control or bidi character, is refused (400), nothing run or stored', { timeout: 60_000 }, async () => {
    for (const [route, body, rule] of [
      ['/api/tools/call', { tool: 'run_command', params: { command: 'touch long-id-ran' }, turn: ownerTurn(`telegram:${'x'.repeat(500_000)}`) }, /turn\.session\.id.*is 500009 bytes in UTF-8, over the 256/],
      ['/api/turns', { turn: ownerTurn('telegram:\u202ecli'), message: 'hello', reply: false }, /turn\.session\.id.*holds U\+202E/],
      ['/api/turns', { turn: ownerTurn('g-fine', `alice${'x'.repeat(300)}`), message: 'hello', reply: false }, /turn\.(speaker|authorised)\.userId.*over the 256/],
      ['/api/tools/call', { tool: 'run_command', params: { command: 'touch long-id-ran' }, turn: ownerTurn('g-fine', 'alice\n') }, /turn\.(speaker|authorised)\.userId.*U\+000A/],
    ] as const) {
      const answer = await daemon.api('POST', route, body);
      expect(answer.status).toBe(400);
      expect(answer.body).toEqual({ error: { code: 'invalid-body', message: expect.stringMatching(rule) } });
    }
    expect(readdirSync(ws).filter((n) => n.startsWith('long-id'))).toEqual([]);
    const listed = await daemon.api('GET', '/api/sessions');
    expect(JSON.stringify(listed.body)).not.toMatch(/xxxxxxxxxx|\u202e/);
  });

  // found by an attack (h105): the same ids in a route's path were answered 500 `internal`
  it("a conversation id in a route's path that no conversation can have is refused (400 bad-request), not a 500", { timeout: 60_000 }, async () => {
    for (const [id, rule] of [
      ['%00', /U\+0000/],
      ['telegram%3A%E2%80%AEcli', /U\+202E/],
      ['x'.repeat(300), /over the 256/],
    ] as const) {
      for (const [method, route] of [['GET', 'settings'], ['POST', 'settings'], ['GET', 'messages'], ['POST', 'stop']] as const) {
        const answer = await daemon.api(method, `/api/sessions/${id}/${route}`, method === 'POST' ? {} : undefined);
        expect(answer.status, `${method} ${route} ${id}`).toBe(400);
        expect(answer.body.error.code).toBe('bad-request');
        expect(answer.body.error.message).toMatch(rule);
      }
    }
  });
});
