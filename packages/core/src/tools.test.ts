import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { ApprovalOutcome, ApprovalRequest, ApprovalService } from './approval.js';
import { AalisError } from './aalis-error.js';
import { defineTool, ToolDispatcher, ToolError } from './tools.js';
import type { OriginTurn } from './turn.js';

const turn: OriginTurn = {
  session: { id: 's' },
  platform: 'cli',
  speaker: { platform: 'cli', userId: 'me' },
  authorised: { platform: 'cli', userId: 'me' },
  inbound: { id: '1' },
  category: 'own',
};

function approvalAnswering(outcome: ApprovalOutcome) {
  const asked: ApprovalRequest[] = [];
  const service: ApprovalService = {
    async ask(request) {
      asked.push(request);
      return outcome;
    },
  };
  return { asked, service };
}

function setup(outcome?: ApprovalOutcome) {
  const ran: unknown[] = [];
  const gate = outcome ? approvalAnswering(outcome) : undefined;
  const dispatcher = new ToolDispatcher({ approval: () => gate?.service });
  dispatcher.register(
    defineTool({
      name: 'echo',
      description: 'returns its text',
      params: z.object({ text: z.string() }),
      risk: 'low',
      handler: (_ctx, p) => {
        ran.push(p);
        return p.text;
      },
    }),
  );
  dispatcher.register(
    defineTool({
      name: 'danger',
      description: 'a high-risk tool whose output is not a message',
      params: z.object({ n: z.number() }),
      risk: 'high',
      summarize: (p) => `danger n=${p.n}`,
      handler: (ctx, p) => {
        ran.push(p);
        return { n: p.n, tool: ctx.tool };
      },
    }),
  );
  return { dispatcher, ran, asked: gate?.asked ?? [] };
}

describe('ToolDispatcher', () => {
  it('runs a low-risk tool and returns a structured value', async () => {
    const { dispatcher } = setup();
    expect(await dispatcher.dispatch({ tool: 'echo', params: { text: 'hi' }, turn })).toEqual({ ok: true, value: 'hi' });
  });

  it('refuses bad parameters with the field, and runs nothing', async () => {
    const { dispatcher, ran } = setup();
    const outcome = await dispatcher.dispatch({ tool: 'echo', params: { text: 3 }, turn });
    expect(outcome).toMatchObject({ ok: false, kind: 'invalid-params' });
    expect(!outcome.ok && outcome.message).toMatch(/'text': .*expected string/);
    expect(ran).toEqual([]);
  });

  it('names the tools there are for an unknown one', async () => {
    const { dispatcher } = setup();
    const outcome = await dispatcher.dispatch({ tool: 'nope', params: {}, turn });
    expect(outcome).toEqual({ ok: false, kind: 'unknown-tool', message: "there is no tool 'nope'; the tools are: echo, danger." });
  });

  it.each<[string, ApprovalOutcome, string | null]>([
    ['approved', { outcome: 'approved', by: { platform: 'cli', userId: 'me' }, remembered: false }, null],
    ['rejected', { outcome: 'rejected', by: 'reviewer', reason: 'too risky' }, 'rejected'],
    ['expired', { outcome: 'expired', afterMs: 1000 }, 'expired'],
  ])('gates a high-risk tool before its handler: %s', async (_name, answer, errorKind) => {
    const { dispatcher, ran, asked } = setup(answer);
    const outcome = await dispatcher.dispatch({ tool: 'danger', params: { n: 1 }, turn });
    expect(asked).toHaveLength(1);
    expect(asked[0]?.subject).toEqual({ kind: 'tool', tool: 'danger', summary: 'danger n=1', rule: 'high-risk' });
    if (errorKind === null) {
      expect(outcome).toEqual({ ok: true, value: { n: 1, tool: 'danger' } });
      expect(ran).toHaveLength(1);
    } else {
      expect(outcome).toMatchObject({ ok: false, kind: errorKind });
      expect(ran).toEqual([]);
    }
  });

  it("escapes bidi, format and separator characters in the high-risk gate's summary and subject (F6)", async () => {
    const gate = approvalAnswering({ outcome: 'rejected', by: 'reviewer', reason: 'no' });
    const dispatcher = new ToolDispatcher({ approval: () => gate.service });
    dispatcher.register(
      defineTool({ name: 'say', description: 'd', params: z.object({ s: z.string() }), risk: 'high', summarize: (p) => `say ${p.s}`, handler: () => 'x' }),
    );
    await dispatcher.dispatch({ tool: 'say', params: { s: 'rm -rf ~ \u2066#\u202eton\u2069\u2028x\u{e0041}' }, turn });
    const [request] = gate.asked;
    for (const shown of [request?.summary, request?.subject.kind === 'tool' ? request.subject.summary : undefined]) {
      expect(shown).not.toMatch(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u);
      expect(shown).toContain('say rm -rf ~ \\u2066#\\u202eton\\u2069\\u2028x\\u{e0041}');
    }
  });

  it('refuses a high-risk tool when no approval service runs (fail closed)', async () => {
    const { dispatcher, ran } = setup();
    const outcome = await dispatcher.dispatch({ tool: 'danger', params: { n: 1 }, turn });
    expect(outcome).toMatchObject({ ok: false, kind: 'rejected', message: expect.stringContaining('no approval service') });
    expect(ran).toEqual([]);
  });

  it("does not ask for a high-risk call its admission refuses, and admits with the call's extensions made again after the gate", async () => {
    const { dispatcher, asked, ran } = setup({ outcome: 'approved', by: 'reviewer', remembered: false });
    let made = 0;
    dispatcher.extend(() => ({ credential: { n: ++made } }) as never);
    const seen: unknown[] = [];
    dispatcher.register(
      defineTool({
        name: 'owners_only',
        description: 'refuses n < 0 before the gate',
        params: z.object({ n: z.number() }),
        risk: 'high',
        admit: (ctx, p) => {
          seen.push((ctx as { credential?: unknown }).credential);
          if (p.n < 0) throw new ToolError('denied', 'not for you');
        },
        handler: (ctx, p) => {
          ran.push((ctx as { credential?: unknown }).credential);
          return p.n;
        },
      }),
    );
    expect(await dispatcher.dispatch({ tool: 'owners_only', params: { n: -1 }, turn })).toEqual({ ok: false, kind: 'denied', message: 'not for you' });
    expect(asked).toEqual([]);
    expect(ran).toEqual([]);
    expect(await dispatcher.dispatch({ tool: 'owners_only', params: { n: 1 }, turn })).toEqual({ ok: true, value: 1 });
    expect(asked).toHaveLength(1);
    // admitted with one context, run with a newer one
    expect(seen).toEqual([{ n: 1 }, { n: 2 }]);
    expect(ran).toEqual([{ n: 3 }]);
  });

  it('does not ask for a high-risk call whose parameters are bad', async () => {
    const { dispatcher, asked } = setup({ outcome: 'approved', by: 'reviewer', remembered: false });
    await dispatcher.dispatch({ tool: 'danger', params: { n: 'x' }, turn });
    expect(asked).toEqual([]);
  });

  it('turns a ToolError into its kind and any other throw into failed', async () => {
    const dispatcher = new ToolDispatcher();
    dispatcher.register(defineTool({ name: 'deny', description: '', params: z.object({}), risk: 'low', handler: () => { throw new ToolError('denied', 'not here'); } }));
    dispatcher.register(defineTool({ name: 'crash', description: '', params: z.object({}), risk: 'low', handler: async () => { throw new Error('disk on fire'); } }));
    expect(await dispatcher.dispatch({ tool: 'deny', params: {}, turn })).toEqual({ ok: false, kind: 'denied', message: 'not here' });
    expect(await dispatcher.dispatch({ tool: 'crash', params: {}, turn })).toEqual({ ok: false, kind: 'failed', message: "tool 'crash' failed: disk on fire" });
  });

  it("an AalisError thrown by a handler (or by what it called) keeps its code and fix in the failure's message", async () => {
    const dispatcher = new ToolDispatcher();
    dispatcher.register(defineTool({ name: 'judge', description: '', params: z.object({}), risk: 'low', handler: () => { throw new AalisError('git-config-unreadable', 'it cannot be judged', { fix: 'make it a regular file' }); } }));
    expect(await dispatcher.dispatch({ tool: 'judge', params: {}, turn })).toEqual({ ok: false, kind: 'failed', message: "tool 'judge' failed (git-config-unreadable): it cannot be judged\nfix: make it a regular file" });
  });

  it('passes what extenders add into the handler context, and refuses duplicate names', async () => {
    const dispatcher = new ToolDispatcher();
    let seen: unknown;
    dispatcher.register(defineTool({ name: 'peek', description: '', params: z.object({}), risk: 'low', handler: (ctx) => { seen = (ctx as Record<string, unknown>).extra; } }));
    const remove = dispatcher.extend(async (call) => ({ extra: `for ${call.tool}` }) as never);
    await dispatcher.dispatch({ tool: 'peek', params: {}, turn });
    expect(seen).toBe('for peek');
    remove();
    await dispatcher.dispatch({ tool: 'peek', params: {}, turn });
    expect(seen).toBeUndefined();
    expect(() => dispatcher.register(defineTool({ name: 'peek', description: '', params: z.object({}), risk: 'low', handler: () => {} }))).toThrow(/already registered/);
  });
});
