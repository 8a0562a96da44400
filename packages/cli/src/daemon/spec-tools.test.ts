// Spec tools through the real daemon binary and its HTTP API, on the real Docker engine.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReloadAnswerSchema, SpecToolsAnswerSchema, ToolsAnswerSchema } from './payloads.js';
import { deploymentDir, ownerTurn, type ServeProcess, startServe, subscribe } from './serve-process.testing.js';

const TEST_IMAGE = process.env.AALIS_SANDBOX_TEST_IMAGE ?? 'aalis/sandbox-test:latest';
const BUILDER_IMAGE = process.env.AALIS_SANDBOX_BUILDER_IMAGE ?? 'aalis/sandbox-builder:latest';

function engineMissing(): string | undefined {
  try {
    execFileSync('docker', ['image', 'inspect', TEST_IMAGE, BUILDER_IMAGE], { stdio: 'pipe', timeout: 15_000 });
    return undefined;
  } catch (error) {
    return (error as Error).message.split('\n')[0];
  }
}
const missing = engineMissing();
const skip = missing !== undefined && process.env.CI !== 'true';
if (skip) console.warn(`cli: skipping the spec-tools daemon test: no engine with ${TEST_IMAGE} and ${BUILDER_IMAGE} (${missing}); run packages/sandbox-docker/scripts/prepare.sh`);

function tool(dir: string, spec: Record<string, unknown>): void {
  mkdirSync(join(dir, 'tools', String(spec.name)), { recursive: true });
  writeFileSync(join(dir, 'tools', String(spec.name), 'tool.json'), JSON.stringify(spec));
}

describe.skipIf(skip)('aalis serve: spec tools over the HTTP API', () => {
  let dir: string;
  let daemon: ServeProcess;

  beforeAll(async () => {
    dir = deploymentDir({ owners: { chat: ['alice'] }, approval: { timeoutMs: 60_000 }, tools: { images: { stdio: TEST_IMAGE, builder: BUILDER_IMAGE } } });
    tool(dir, {
      name: 'echo_env',
      description: 'Answers with the envelope it read and the zone it sees.',
      parameters: { type: 'object', properties: { word: { type: 'string' } }, required: ['word'], additionalProperties: false },
      risk: 'low',
      sandbox: { profile: 'stdio' },
      command: ['sh', '-c', 'read -r line; printf \'{"ok":true,"value":{"envelope":%s,"tz":"%s"}}\' "$line" "$(date +%z)"'],
    });
    tool(dir, { name: 'risky', description: 'High-risk.', risk: 'high', sandbox: { profile: 'stdio' }, command: ['sh', '-c', 'echo \'{"ok":true,"value":"ran"}\''] });
    tool(dir, { name: 'bad_field', description: 'Bad.', risk: 'low', sandbox: { profile: 'stdio', read_only: false }, command: ['true'] });
    daemon = await startServe(dir);
  }, 90_000);
  afterAll(async () => {
    await daemon?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('lists spec tools and the tool manager in GET /api/tools, with their JSON Schema and risk', async () => {
    const { tools } = ToolsAnswerSchema.parse((await daemon.api('GET', '/api/tools')).body);
    expect(tools.find((t) => t.name === 'echo_env')).toMatchObject({ risk: 'low', parameters: { type: 'object', required: ['word'] } });
    expect(tools.find((t) => t.name === 'risky')).toMatchObject({ risk: 'high' });
    expect(tools.find((t) => t.name === 'tool_manager')).toMatchObject({ risk: 'high' });
    expect(tools.some((t) => t.name === 'bad_field')).toBe(false);
  });

  it('GET /api/tools/spec says the engine works and names the bad spec by file and field', async () => {
    const answer = SpecToolsAnswerSchema.parse((await daemon.api('GET', '/api/tools/spec')).body);
    expect(answer.engine).toMatchObject({ configured: true, available: true });
    expect(answer.problems).toEqual([{ tool: 'bad_field', file: join(answer.dir, 'bad_field', 'tool.json'), field: 'sandbox.read_only', message: expect.stringContaining('cannot be turned off') }]);
    expect(ReloadAnswerSchema.parse((await daemon.api('POST', '/api/tools/reload')).body)).toMatchObject({ ok: false, loaded: ['echo_env', 'risky'], added: [], removed: [] });
  });

  it('POST /api/tools/call runs a spec tool in a container through the envelope', async () => {
    const { status, body } = await daemon.api('POST', '/api/tools/call', { tool: 'echo_env', params: { word: 'hi' }, turn: ownerTurn('chat-spec') });
    expect(status).toBe(200);
    expect(body).toMatchObject({ ok: true, value: { envelope: { tool: 'echo_env', params: { word: 'hi' }, call: { session: 'chat-spec', principal: 'chat:alice' } }, tz: '+0000' } });
  }, 60_000);

  it('a high-risk spec tool is asked first; rejected, it answers rejected', async () => {
    const stream = await subscribe(daemon.url, daemon.token);
    try {
      const call = daemon.api('POST', '/api/tools/call', { tool: 'risky', params: {}, turn: ownerTurn('chat-risky') });
      const asked = await stream.next('approval/requested');
      expect(asked).toMatchObject({ subject: { kind: 'tool', tool: 'risky', rule: 'high-risk' } });
      await daemon.api('POST', '/api/approvals/reply', { code: asked.code, decision: 'reject', by: { platform: 'chat', userId: 'alice' } });
      expect((await call).body).toMatchObject({ ok: false, kind: 'rejected' });
    } finally {
      stream.close();
    }
  }, 60_000);

  it('the tools directory is control plane: a command cannot plant a tool there, and nobody is asked', async () => {
    const stream = await subscribe(daemon.url, daemon.token);
    try {
      const target = join(dir, 'tools', 'planted');
      const call = daemon.api('POST', '/api/tools/call', { tool: 'run_command', params: { command: `mkdir -p ${target} && echo '{}' > ${target}/tool.json` }, turn: ownerTurn('chat-plant') });
      const first = await Promise.race([call.then(() => 'answered' as const), stream.next('approval/requested').then(() => 'asked' as const)]);
      expect(first).toBe('answered');
      expect((await call).body).toMatchObject({ ok: true, value: { refusedWrites: [expect.objectContaining({ rule: 'control-plane' })] } });
      expect(existsSync(target)).toBe(false);
    } finally {
      stream.close();
    }
  }, 60_000);
});
