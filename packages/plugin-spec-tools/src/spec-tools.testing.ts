// A real kernel for the spec-tools tests: sessions, authority (owner chat:owner), the approval
// desk answered by the test, the reach plugin, the dispatcher, the built-in tools, the real Linux
// sandbox (profile local) and the spec-tools plugin on the real Docker engine. Nothing is mocked.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sandbox } from '@aalis/api-reach';
import { authorityPlugin, createKernel, definePlugin, type Kernel, makeProcessDir, type ToolOutcome, tools, toolsPlugin, type OriginTurn, sessions, sessionsPlugin } from '@aalis/core';
import { type ApprovalDeskService, type ApprovalRequestedEvent, approvalDesk, approvalPlugin } from '@aalis/plugin-approval';
import { reachBindings, reachPlugin } from '@aalis/plugin-reach';
import { builtinToolsPlugin } from '@aalis/plugin-tools';
import { createLinuxSandbox } from '@aalis/sandbox-linux';
import { specToolsPlugin } from './plugin.js';
import { specTools } from './spec-tools-service.js';

/** The images scripts/prepare.sh of sandbox-docker builds. */
export const TEST_IMAGE = process.env.AALIS_SANDBOX_TEST_IMAGE ?? 'aalis/sandbox-test:latest';
export const BUILDER_IMAGE = process.env.AALIS_SANDBOX_BUILDER_IMAGE ?? 'aalis/sandbox-builder:latest';

function check(): string | undefined {
  try {
    execFileSync('docker', ['info', '--format', '{{.ServerVersion}}'], { stdio: 'pipe', timeout: 15_000 });
    execFileSync('docker', ['image', 'inspect', TEST_IMAGE, BUILDER_IMAGE], { stdio: 'pipe', timeout: 15_000 });
  } catch (error) {
    return `no Docker engine with ${TEST_IMAGE} and ${BUILDER_IMAGE} (${(error as Error).message.split('\n')[0]}); run packages/sandbox-docker/scripts/prepare.sh as root`;
  }
  return undefined;
}

/** Why the real-engine tests cannot run; in CI (CI=true) they run anyway and fail. */
export const engineMissing = check();
/** Skip the real-engine tests only outside CI, saying why. */
export const engineSkip = engineMissing !== undefined && process.env.CI !== 'true';
if (engineSkip) console.warn(`plugin-spec-tools: skipping real-engine tests: ${engineMissing}`);

export const owner = { platform: 'chat', userId: 'owner' };

/** A fresh real temp directory under /tmp, in this test process's own folder there: removed when the process exits, or by a later run once it is gone (a full run left over a hundred behind). */
export function tempDir(prefix = 'aalis-spec-'): string {
  ownDir ??= makeProcessDir(tmpdir(), 'aalis-spec-run-');
  return realpathSync(mkdtempSync(join(ownDir, prefix)));
}

let ownDir: string | undefined;

/** Every container of an instance, running or not, straight from the engine. */
export function containersOf(instance: string): string[] {
  const out = execFileSync('docker', ['ps', '--all', '--quiet', '--filter', `label=dev.aalis.instance=${instance}`], { encoding: 'utf8' });
  return out.split('\n').filter((l) => l.trim() !== '');
}

/** Containers of an instance the engine created since `since` (unix seconds, fractional allowed): its event log, not a snapshot. */
export function createdSince(instance: string, since: number): number {
  const out = execFileSync('docker', ['events', '--since', since.toFixed(6), '--until', String(Math.floor(Date.now() / 1000) + 1), '--filter', 'type=container', '--filter', 'event=create', '--filter', `label=dev.aalis.instance=${instance}`, '--format', '{{.ID}}'], { encoding: 'utf8' });
  return out.split('\n').filter((l) => l.trim() !== '').length;
}

/** Copies a fixture tool folder (`src/fixtures/tools/<name>`) into a tools directory. */
export function addFixture(toolsDir: string, name: string, from = join(import.meta.dirname, 'fixtures', 'tools')): void {
  mkdirSync(toolsDir, { recursive: true });
  cpSync(join(from, name), join(toolsDir, name), { recursive: true });
}

export type Answer = 'approve' | 'reject';

/** A started kernel and how the tests drive it. */
export interface SpecEnv {
  readonly kernel: Kernel;
  readonly toolsDir: string;
  readonly instance: string;
  readonly asked: ApprovalRequestedEvent[];
  /** How the next asks are answered (in order); `hold` leaves them pending. */
  answers: (Answer | 'hold')[];
  call(tool: string, params: unknown): Promise<ToolOutcome>;
  /** A call in conversation `main` on the turn of someone who is not an owner. */
  callAsStranger(tool: string, params: unknown): Promise<ToolOutcome>;
  desk(): ApprovalDeskService;
  stop(): Promise<void>;
}

let counter = 0;

/** Starts the kernel; `docker: false` starts it as a host deployment without an engine. */
export async function startSpecEnv(options: { toolsDir: string; docker?: boolean; fixtures?: readonly string[]; instance?: string }): Promise<SpecEnv> {
  const root = tempDir();
  const project = join(root, 'project');
  mkdirSync(project);
  for (const name of options.fixtures ?? []) addFixture(options.toolsDir, name);
  const instance = options.instance ?? `h4spec-${process.pid}-${++counter}-${Date.now() % 100000}`;
  const asked: ApprovalRequestedEvent[] = [];
  const state = { answers: [] as (Answer | 'hold')[] };
  const kernel: Kernel = createKernel({ dataDir: join(root, 'data') })
    .use(sessionsPlugin, { persist: false })
    .use(authorityPlugin, { owners: { chat: ['owner'] } })
    .use(approvalPlugin, { timeoutMs: 20_000 })
    .use(reachPlugin, { install: join(root, 'install'), form: 'source', userHome: root, loginShell: '/bin/sh' })
    .use(toolsPlugin)
    .use(builtinToolsPlugin)
    .use(definePlugin({ name: 'sandbox-linux', provides: [sandbox], apply: (ctx) => ctx.provide(sandbox, createLinuxSandbox()) }))
    .use(specToolsPlugin, {
      dir: options.toolsDir,
      ...(options.docker === false ? {} : { docker: { images: { stdio: TEST_IMAGE, network: TEST_IMAGE, builder: BUILDER_IMAGE }, instance } }),
    })
    .use(
      definePlugin({
        name: 'test-adapter',
        inject: [approvalDesk],
        apply(ctx) {
          const desk = ctx.get(approvalDesk);
          ctx.on('approval/requested', (event) => {
            asked.push(event);
            const answer = state.answers.shift() ?? 'reject';
            if (answer !== 'hold') void desk.reply({ code: event.code, decision: answer, by: owner });
          });
        },
      }),
    );
  const status = await kernel.start();
  const failed = status.filter((s) => s.state !== 'running');
  if (failed.length > 0) throw new Error(`plugins did not start: ${JSON.stringify(failed)}`);
  kernel.get(reachBindings).bind('main', { home: project });
  await kernel.get(sessions).change('main', { tier: 'workspace', boundary: 'ask' });
  const turn = (): OriginTurn => ({ session: { id: 'main' }, platform: 'chat', speaker: owner, authorised: owner, inbound: { id: `m${++counter}` }, category: 'own' });
  return {
    kernel,
    toolsDir: kernel.get(specTools).dir,
    instance,
    asked,
    get answers() {
      return state.answers;
    },
    set answers(value) {
      state.answers = value;
    },
    call: (tool, params) => kernel.get(tools).dispatch({ tool, params, turn: turn() }),
    callAsStranger: (tool, params) => {
      const stranger = { platform: 'chat', userId: 'stranger' };
      return kernel.get(tools).dispatch({ tool, params, turn: { ...turn(), speaker: stranger, authorised: stranger } });
    },
    desk: () => kernel.get(approvalDesk),
    stop: async () => {
      await kernel.stop();
    },
  };
}
