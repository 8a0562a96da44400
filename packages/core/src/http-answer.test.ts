import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AalisError } from './aalis-error.js';
import { httpStatusOf, readJsonBody, REFUSED_STATUS, sendErrorAnswer, sendJson } from './http-answer.js';

describe('httpStatusOf', () => {
  it.each([
    ['bad-input', 400],
    ['invalid-body', 400],
    ['unauthorized', 401],
    ['not-found', 404],
    ['method-not-allowed', 405],
    ['turn-running', 409],
    ['export-clash', 409],
    ['unsupported-media-type', 415],
    ['stopping', 503],
    ['export-disabled', REFUSED_STATUS],
  ])('gives %s the status %i', (code, status) => {
    expect(httpStatusOf(new AalisError(code, 'm'))).toBe(status);
  });

  it('answers 500 for anything thrown that is not an AalisError', () => {
    expect(httpStatusOf(new TypeError('x is not iterable'))).toBe(500);
  });
});

describe('the JSON answer helpers, over a real HTTP server', () => {
  let server: Server;
  let url: string;
  beforeAll(async () => {
    server = createServer((req, res) => {
      readJsonBody(req, z.object({ n: z.number() }).strict(), { emptyBody: { n: 0 } })
        .then((body) => sendJson(res, 200, body))
        .catch((error: unknown) => sendErrorAnswer(res, error));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  const post = async (body: string, type = 'application/json') => {
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': type }, body });
    return { status: res.status, nosniff: res.headers.get('x-content-type-options'), body: await res.json() };
  };

  it.each([
    ['a valid body', '{"n":1}', 'application/json', 200, { n: 1 }],
    ['an empty body, as the route chose', '', 'application/json', 200, { n: 0 }],
    ['a form', 'n=1', 'application/x-www-form-urlencoded', 415, { error: { code: 'unsupported-media-type', message: expect.stringContaining('as JSON') } }],
    ['broken JSON', '{n', 'application/json', 400, { error: { code: 'invalid-body', message: expect.stringContaining('not valid JSON') } }],
    ['an unknown field', '{"n":1,"x":2}', 'application/json', 400, { error: { code: 'invalid-body', message: expect.stringContaining('x') } }],
    ['a body over 1 MiB', JSON.stringify({ n: 1, pad: 'x'.repeat(1024 * 1024) }), 'application/json', 413, { error: { code: 'too-large', message: expect.stringContaining('larger than 1048576 bytes'), fix: 'send at most 1048576 bytes' } }],
    ['nesting 65 levels deep', `{"n":1,"x":${'['.repeat(64)}${']'.repeat(64)}}`, 'application/json', 400, { error: { code: 'invalid-body', message: expect.stringContaining('deeper than 64 levels') } }],
    ['nesting 500,000 levels deep (within 1 MiB)', `{"n":1,"x":${'['.repeat(500_000)}${']'.repeat(500_000)}}`, 'application/json', 400, { error: { code: 'invalid-body', message: expect.stringContaining('deeper than 64 levels') } }],
    ['nesting 64 levels deep: read, then refused by the schema alone', `{"n":1,"x":${'['.repeat(63)}${']'.repeat(63)}}`, 'application/json', 400, { error: { code: 'invalid-body', message: expect.stringContaining('Unrecognized key: "x"') } }],
  ])('answer %s', async (_what, body, type, status, answer) => {
    const got = await post(body, type);
    expect(got).toEqual({ status, nosniff: 'nosniff', body: answer });
  });
});
