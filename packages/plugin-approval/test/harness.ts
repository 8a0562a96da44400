// Shared set-up for the plugin's tests: a real kernel with the real sessions, authority and
// approval plugins on a real temp directory. Only the reviewer is scripted by each test (it
// stands in for a model, which cannot run here).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type ApprovalRequest,
  type ApprovalService,
  type ApprovalSubject,
  DurableStore,
  approval,
  authorityPlugin,
  createKernel,
  definePlugin,
  type Identity,
  type Kernel,
  type OriginTurn,
  type Plugin,
  sessionsPlugin,
} from '@aalis/core';
import {
  type ApprovalConfig,
  type ApprovalDeskService,
  type ApprovalRequestedEvent,
  type ApprovalResolvedEvent,
  type ApprovalReviewer,
  AuditLog,
  type AuditRecord,
  approvalDesk,
  approvalPlugin,
  approvalReviewer,
} from '../src/index.js';

export const OWNER: Identity = { platform: 'chat', userId: 'owner' };
export const STRANGER: Identity = { platform: 'chat', userId: 'stranger' };

const dirs: string[] = [];
/** A fresh temp directory, removed by {@link removeTempDirs}. */
export async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'aalis-approval-'));
  dirs.push(dir);
  return dir;
}
export async function removeTempDirs(): Promise<void> {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
}

/** A person's own turn in a session. */
export function turnOf(speaker: Identity, session = 's1', rootId?: string): OriginTurn {
  return {
    session: rootId === undefined ? { id: session } : { id: session, rootId },
    platform: speaker.platform,
    speaker,
    authorised: speaker,
    inbound: { id: `m-${Math.random().toString(36).slice(2)}` },
    category: 'own',
  };
}

/** An ask to write one path. */
export function writeAsk(path: string, options: { rememberable?: boolean; turn?: OriginTurn; rule?: 'tier' | 'boundary' | 'landing' } = {}): ApprovalRequest {
  return {
    turn: options.turn ?? turnOf(OWNER),
    subject: { kind: 'write-path', path, rule: options.rule ?? 'boundary' },
    summary: `write ${path}`,
    rememberable: options.rememberable ?? true,
  };
}

/** An ask for any subject. */
export function askOf(subject: ApprovalSubject, options: { rememberable?: boolean; turn?: OriginTurn } = {}): ApprovalRequest {
  return { turn: options.turn ?? turnOf(OWNER), subject, summary: `do ${subject.kind}`, rememberable: options.rememberable ?? true };
}

/** A plugin providing a scripted reviewer. */
export function reviewerPlugin(reviewer: ApprovalReviewer): Plugin {
  return definePlugin({
    name: 'test-reviewer',
    provides: [approvalReviewer],
    apply(ctx) {
      ctx.provide(approvalReviewer, reviewer);
    },
  });
}

export interface Harness {
  readonly kernel: Kernel;
  readonly dir: string;
  /** The `approval` service, as core's dispatcher and plugin-reach see it. */
  readonly gate: ApprovalService;
  readonly desk: ApprovalDeskService;
  readonly requested: ApprovalRequestedEvent[];
  readonly resolved: ApprovalResolvedEvent[];
  /** The next `approval/requested` event (or one already seen and not yet taken). */
  nextRequest(): Promise<ApprovalRequestedEvent>;
  /** The audit log as it is on disk. */
  audit(): Promise<AuditRecord[]>;
}

/** Starts a kernel with sessions, authority (owner: chat/owner) and approval on `dir`. */
export async function startKernel(options: { dir?: string; config?: ApprovalConfig; reviewer?: ApprovalReviewer; extra?: Plugin[]; owners?: Record<string, string[]> } = {}): Promise<Harness> {
  const dir = options.dir ?? (await tempDir());
  const kernel = createKernel({ dataDir: dir })
    .use(sessionsPlugin)
    .use(authorityPlugin, { owners: options.owners ?? { chat: ['owner'] } })
    .use(approvalPlugin, options.config ?? {});
  if (options.reviewer) kernel.use(reviewerPlugin(options.reviewer));
  for (const plugin of options.extra ?? []) kernel.use(plugin);
  const requested: ApprovalRequestedEvent[] = [];
  const resolved: ApprovalResolvedEvent[] = [];
  const waiting: ((event: ApprovalRequestedEvent) => void)[] = [];
  let taken = 0;
  // Subscribed before start, so what recovery announces at start is seen too.
  kernel.events.on('approval/requested', (event) => {
    requested.push(event);
    const waiter = waiting.shift();
    if (waiter) {
      taken++;
      waiter(event);
    }
  });
  kernel.events.on('approval/resolved', (event) => resolved.push(event));
  const status = await kernel.start();
  const failed = status.filter((s) => s.state === 'failed');
  if (failed.length > 0) throw new Error(`kernel did not start: ${JSON.stringify(failed)}`);
  const store = await DurableStore.open(join(dir, 'approval'));
  return {
    kernel,
    dir,
    gate: kernel.get(approval),
    desk: kernel.get(approvalDesk),
    requested,
    resolved,
    nextRequest: () => {
      const seen = requested[taken];
      if (seen) {
        taken++;
        return Promise.resolve(seen);
      }
      return new Promise((resolve) => waiting.push(resolve));
    },
    audit: async () => (await new AuditLog(store).read()).records,
  };
}
