// The token goes only to a server that proves it knows it: the real daemon answers /api/proof; a
// server another local user starts on a stopped daemon's port cannot, and `aalis pod` then sends
// it nothing (found by an attack: the console's tab and `aalis chat` sent the token to such a
// squatter). Real daemon, real CLI, a real server on the port; no stand-in.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, rmSync } from 'node:fs';
import { createServer, get as httpGet, type IncomingHttpHeaders } from 'node:http';
import { type AddressInfo, connect, createServer as createNetServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, deploymentDir, type ServeProcess, startServe } from './daemon/serve-process.testing.js';
import { proofAddressOf, proofOf } from './daemon/token.js';
import { NotTheDaemonError, proveDaemon } from './daemon-proof.js';

describe("a client proves the daemon before it sends the token", () => {
  let dir: string;
  let daemon: ServeProcess;
  beforeAll(async () => {
    dir = deploymentDir({});
    daemon = await startServe(dir);
  }, 90_000);
  afterAll(async () => {
    await daemon?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the daemon answers /api/proof without the token, with the HMAC of the nonce under its token', async () => {
    const nonce = randomBytes(32).toString('hex');
    const res = await daemon.api('GET', `/api/proof?nonce=${nonce}`, undefined, null);
    const at = proofAddressOf(new URL(daemon.url).hostname, Number(new URL(daemon.url).port));
    expect(res).toMatchObject({ status: 200, body: { proof: proofOf(daemon.token, nonce, at), address: at.address, port: at.port } });
    expect(proofOf(daemon.token, nonce, at)).not.toBe(proofOf(`${daemon.token}x`, nonce, at));
    expect(proofOf(daemon.token, nonce, at)).not.toBe(proofOf(daemon.token, nonce, { ...at, port: at.port + 1 }));
    expect((await daemon.api('GET', '/api/proof?nonce=xyz', undefined, null)).status).toBe(400);
    expect((await daemon.api('POST', `/api/proof?nonce=${nonce}`, {}, null)).status).toBe(405);
    await proveDaemon(daemon.url, daemon.token);
    await expect(proveDaemon(daemon.url, `${daemon.token}x`)).rejects.toThrow(NotTheDaemonError);
    // the token then goes to the address proved, never to the name again (a name may resolve to
    // another address on the next connection, where another local user listens)
    const byName = new URL(daemon.url);
    byName.hostname = 'localhost';
    expect(await proveDaemon(byName.href, daemon.token)).toBe(`http://${at.address}:${at.port}`);
    // the console loaded by a name is sent to the address (its later requests would go to the name)
    const redirect = await new Promise<{ status?: number; location?: string }>((resolve, reject) => {
      httpGet(`${daemon.url}/console?x=1`, { headers: { host: `localhost:${at.port}` } }, (res) => {
        res.resume();
        resolve({ status: res.statusCode, location: res.headers.location });
      }).on('error', reject);
    });
    expect(redirect).toEqual({ status: 307, location: `http://${at.address}:${at.port}/console?x=1` });
  });

  // A relay on another port, forwarding every byte to the daemon, got a proof that held and then
  // the token (found by an attack, with a fixed AALIS_TOKEN): the proof now names the daemon's end.
  it('a server relaying to the daemon from another port cannot pass the proof on: aalis pod sends it no token', async () => {
    const target = new URL(daemon.url);
    const seen: string[] = [];
    const relay = createNetServer((client) => {
      const upstream = connect(Number(target.port), target.hostname);
      client.on('data', (chunk: Buffer) => seen.push(chunk.toString('latin1')));
      client.pipe(upstream).pipe(client);
      client.on('error', () => upstream.destroy());
      upstream.on('error', () => client.destroy());
    });
    await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
    const relayUrl = `http://127.0.0.1:${(relay.address() as AddressInfo).port}`;
    try {
      await expect(proveDaemon(relayUrl, daemon.token)).rejects.toThrow(NotTheDaemonError);
      const run = await new Promise<{ status: number | null; stderr: string }>((resolve) => {
        execFile(process.execPath, [BIN, 'pod', 'list', '--url', relayUrl], { env: { ...process.env, AALIS_TOKEN: daemon.token }, encoding: 'utf8', timeout: 60_000 }, (error, _stdout, stderr) => {
          resolve({ status: error === null ? 0 : typeof error.code === 'number' ? error.code : null, stderr });
        });
      });
      expect(run.status).not.toBe(0);
      expect(run.stderr).toMatch(/could not prove it is the daemon whose token this is/);
      expect(seen.join('')).toContain('/api/proof');
      expect(seen.join('')).not.toContain(daemon.token);
    } finally {
      await new Promise<void>((resolve) => relay.close(() => resolve()));
    }
  }, 90_000);

  it('a clean stop removes the url and token files; a squatter on the port then gets no token from aalis pod', async () => {
    const { port } = new URL(daemon.url);
    const files = ['url', 'token'].map((name) => join(dir, 'data', 'daemon', name));
    for (const file of files) expect(existsSync(file)).toBe(true);
    await daemon.stop();
    for (const file of files) expect(existsSync(file)).toBe(false);

    const seen: IncomingHttpHeaders[] = [];
    const squatter = createServer((req, res) => {
      seen.push(req.headers);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ proof: '0'.repeat(64), tasks: [] }));
    });
    await new Promise<void>((resolve) => squatter.listen(Number(port), '127.0.0.1', resolve));
    try {
      // not spawnSync: the squatter answers from this process's event loop
      const run = await new Promise<{ status: number | null; stderr: string }>((resolve) => {
        execFile(process.execPath, [BIN, 'pod', 'list', '--url', daemon.url], { env: { ...process.env, AALIS_TOKEN: daemon.token }, encoding: 'utf8', timeout: 60_000 }, (error, _stdout, stderr) => {
          resolve({ status: error === null ? 0 : typeof error.code === 'number' ? error.code : null, stderr });
        });
      });
      expect(run.status).not.toBe(0);
      expect(run.stderr).toMatch(/could not prove it is the daemon whose token this is.*The token was not sent/);
      expect(seen.length).toBeGreaterThan(0);
      for (const headers of seen) expect(headers.authorization).toBeUndefined();
    } finally {
      await new Promise<void>((resolve) => squatter.close(() => resolve()));
    }
  }, 90_000);
});
