import { isAbsolute, relative, sep } from 'node:path';
import { checkEnvPattern, checkPattern, INSTALL_FORMS, type PathMatcher, type PathRule, type ProtectedLists, type Reach, reach, resolveReach } from '@aalis/api-reach';
import { approval, authority, definePlugin, type OriginTurn, type SessionSettings, sessions, settingsScopeOf } from '@aalis/core';
import { z } from 'zod';
import { type Binding, reachBindings, reachView } from './bindings.js';
import { issueCredential } from './credential.js';
import { gitDirsOf } from './git-dirs.js';
import { envrcLandingsOf } from './envrc-landings.js';
import { hooksPathLandings } from './hooks-path.js';
import { reachInstanceOf } from './instance.js';
import { captureLoginEnv, definedOnly, type LoginEnv } from './login-env.js';
import { ReachCache, reachKeyOf } from './reach-cache.js';
import { realPathOfSync } from './real-path.js';
import { ensureSessionTmp } from './session-tmp.js';

/** One extra landing of the config: a path, or a pattern every sandbox backend can translate. */
export const LandingConfigSchema = z.union([
  z.strictObject({ path: z.string().min(1), reason: z.string().min(1).optional() }),
  z.strictObject({
    pattern: z.string().superRefine((pattern, ctx) => {
      const problem = checkPattern(pattern);
      if (problem !== undefined) ctx.addIssue({ code: 'custom', message: `the pattern '${pattern}' cannot be a landing: ${problem}` });
    }),
    reason: z.string().min(1).optional(),
  }),
]);

const EnvPatternSchema = z.string().superRefine((pattern, ctx) => {
  const problem = checkEnvPattern(pattern);
  if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
});

/** The key of one person's binding in a session. */
function personKey(sessionId: string, person: string): string {
  return `${sessionId}\u0000${person}`;
}

/**
 * The rule that keeps a call out of every person space but its own: `personSpaces` and all under
 * it, except `own` (the binding's space) when there is one.
 */
function othersSpacesRule(personSpaces: string, own: string | undefined): PathRule {
  return own === undefined ? { path: personSpaces } : { path: personSpaces, except: [{ path: own }] };
}

/**
 * A person's space as a binding keeps it: a real path directly inside `personSpaces`. Anything
 * else would carve the wrong place (or the whole directory) out of the rule, so it throws.
 */
function ownSpaceOf(personSpaces: string | undefined, space: string): string {
  if (personSpaces === undefined) return space;
  const rel = relative(personSpaces, space);
  if (rel === '' || rel.startsWith('..') || isAbsolute(rel) || rel.includes(sep)) {
    throw new Error(`reach: the person space ${space} is not a space directly inside ${personSpaces}; refusing to bind it.`);
  }
  return space;
}

/** Config of the reach plugin. Paths may be relative to the working directory; they become real paths at activation. */
export const ReachConfigSchema = z.object({
  /** The install: the source checkout or the create-aalis project. */
  install: z.string().min(1),
  form: z.enum(INSTALL_FORMS),
  /** This instance's data directory; defaults to the kernel's. */
  data: z.string().min(1).optional(),
  /** The main config file; defaults to `config.yaml` in the data directory. */
  configFile: z.string().min(1).optional(),
  /** The deployment directory holding `data/` and `data-*` of sibling instances. */
  deployment: z.string().min(1).optional(),
  /**
   * Other instances' data directories this one knows of (running daemons', the default one): never
   * readable, never writable, whole. Paths that do not exist, or that hold this instance's own data
   * directory, are left out.
   */
  otherData: z.array(z.string().min(1)).default([]),
  /**
   * The docker deployment's directory of person spaces (`<data>/workspace/users`). When set, every
   * space in it but the calling person's own (their binding's `space`) is on the deny-read list
   * and the control plane of the call, so no tier, ask or grant reaches another person's files or
   * session temps from the host-side tools; a call bound to no person space reaches none of them.
   */
  personSpaces: z.string().min(1).optional(),
  /** Directories outside the install the daemon loaded code from (linked plugins). */
  codeDirs: z.array(z.string().min(1)).default([]),
  /** The daemon's entry script (npm form). */
  entry: z.string().min(1).optional(),
  /** Ports on the loopback the sandbox must not reach (the daemon's own, its console's). */
  localPorts: z.array(z.number().int().min(1).max(65535)).default([]),
  /** The owner's home; defaults to the OS's. */
  userHome: z.string().min(1).optional(),
  /** The owner's login shell for `processEnv('host')`; defaults to $SHELL. */
  loginShell: z.string().min(1).optional(),
  loginShellTimeoutMs: z.number().int().positive().default(3000),
  /**
   * Where the owner's environment comes from: `login-shell` (a daemon, whose own environment is a
   * service manager's) or `process`, this process's own (a command run from the owner's terminal,
   * `aalis exec`, already has the terminal's: a login shell would only cost its start-up).
   */
  ownerEnv: z.enum(['login-shell', 'process']).default('login-shell'),
  platform: z.enum(['linux', 'darwin', 'win32']).optional(),
  /**
   * Extra landings (writing one asks), after api-reach's table: a path (relative to the working
   * directory; it and everything under it) or a whole-path pattern in api-reach's subset.
   */
  landings: z.array(LandingConfigSchema).default([]),
  /** The config file holds a secret (an inline model key): it goes on the deny-read list (api-reach's `configHoldsSecrets`). */
  configHoldsSecrets: z.boolean().default(false),
  /**
   * The sandboxed command's environment: variables named like credentials (api-reach's
   * `SECRET_ENV_RULES`) are removed; `allow` lets names or patterns through anyway (never
   * `AALIS_*`), `deny` removes more.
   */
  env: z
    .object({
      allow: z.array(EnvPatternSchema).default([]),
      deny: z.array(EnvPatternSchema).default([]),
    })
    .strict()
    .default({ allow: [], deny: [] }),
});
/** Config of the reach plugin. */
export type ReachConfig = z.infer<typeof ReachConfigSchema>;

/**
 * Provides `reach` (one credential per tool call) and `reach/bindings`. Host paths and protected
 * lists are built once here, over real paths taken now; every credential's `require`, `allows`
 * and `sandboxPolicy` then follow the session's settings as they change.
 */
export const reachPlugin = definePlugin({
  name: 'reach',
  provides: [reach, reachBindings, reachView],
  inject: [authority, sessions],
  optional: [approval],
  config: ReachConfigSchema,
  apply(ctx, config) {
    const instance = reachInstanceOf(config, ctx.dataDir);
    const { paths, lists, toolchainCaches } = instance;
    const auth = ctx.get(authority);
    const sessionService = ctx.get(sessions);

    let ownerEnvOnce: Promise<LoginEnv> | undefined;
    const loginEnv = () => {
      if (config.ownerEnv === 'process') {
        // frozen: what a call filters from it is kept by its identity (login-env.ts)
        ownerEnvOnce ??= Promise.resolve({ source: 'process', env: Object.freeze(definedOnly(process.env)) });
        return ownerEnvOnce;
      }
      ownerEnvOnce ??= captureLoginEnv({ ...(config.loginShell ? { shell: config.loginShell } : {}), timeoutMs: config.loginShellTimeoutMs, base: process.env }).then((captured) => {
        if (captured.source === 'fallback') process.emitWarning(`reach: using the daemon's environment for host commands: ${captured.reason}`);
        return { ...captured, env: Object.freeze({ ...captured.env }) };
      });
      return ownerEnvOnce;
    };

    const current = new Map<string, SessionSettings>();
    // Resolved once per binding and settings, not per call (its compiled rules are the cost).
    const reaches = new ReachCache();
    ctx.on('session/settings-changed', (event) => current.set(event.sessionId, event.next));

    // Taken as a real path once, like every other path of the lists (the targets judged are real paths).
    const personSpaces = config.personSpaces === undefined ? undefined : realPathOfSync(config.personSpaces);
    // A binding's own base lists: the host's, plus (docker deployment) every person space but its
    // own as deny-read and control plane. Kept per binding so the compiled rules are built once.
    const baseLists = new WeakMap<Binding, ProtectedLists>();
    const baseListsOf = (binding: Binding): ProtectedLists => {
      if (personSpaces === undefined) return lists;
      let base = baseLists.get(binding);
      if (base === undefined) {
        const others = othersSpacesRule(personSpaces, binding.space);
        base = Object.freeze({ ...lists, control: Object.freeze([...lists.control, others]), denyRead: Object.freeze([...lists.denyRead, others]) });
        baseLists.set(binding, base);
      }
      return base;
    };
    // The landings of a binding: the host's, and the hooks directories its repository names now.
    const bindingLists = new WeakMap<Binding, Map<string, ProtectedLists>>();
    const listsOf = (binding: Binding, hooks: readonly PathMatcher[], id: string): ProtectedLists => {
      const base = baseListsOf(binding);
      if (hooks.length === 0) return base;
      const byHooks = bindingLists.get(binding) ?? new Map<string, ProtectedLists>();
      bindingLists.set(binding, byHooks);
      let own = byHooks.get(id);
      if (own === undefined) {
        own = Object.freeze({ ...base, landing: Object.freeze([...base.landing, ...hooks]) });
        byHooks.set(id, own);
      }
      return own;
    };

    const bindings = new Map<string, Binding>();
    const gitConfig = { userHome: instance.userHome, ...(process.env.XDG_CONFIG_HOME ? { xdgConfigHome: process.env.XDG_CONFIG_HOME } : {}) };
    const defaultBinding: Binding = Object.freeze({
      home: paths.workspace,
      extraRoots: [],
      worktrees: [],
      gitDirs: gitDirsOf(paths.workspace),
    });
    ctx.provide(reachBindings, {
      bind(sessionId, place) {
        const home = realPathOfSync(place.home);
        const binding: Binding = Object.freeze({
          home,
          extraRoots: Object.freeze((place.extraRoots ?? []).map((r) => realPathOfSync(r))),
          worktrees: Object.freeze((place.worktrees ?? []).map((w) => realPathOfSync(w))),
          gitDirs: Object.freeze(gitDirsOf(home)),
          ...(place.tmp !== undefined ? { tmp: realPathOfSync(place.tmp) } : {}),
          ...(place.caches !== undefined ? { caches: Object.freeze(place.caches.map((c) => realPathOfSync(c))) } : {}),
          ...(place.space !== undefined ? { space: ownSpaceOf(personSpaces, realPathOfSync(place.space)) } : {}),
        });
        const key = place.person === undefined ? sessionId : personKey(sessionId, place.person);
        // What the key's calls used until now: its own binding, else (a person) the session's, else the default.
        const previous = bindings.get(key) ?? (place.person === undefined ? undefined : bindings.get(sessionId)) ?? defaultBinding;
        bindings.set(key, binding);
        if (previous.home !== binding.home) {
          ctx.emit('reach/main-directory-changed', { sessionId, ...(place.person !== undefined ? { person: place.person } : {}), previous: previous.home, next: binding.home });
        }
        return binding;
      },
      bindingOf: (sessionId) => bindings.get(sessionId) ?? defaultBinding,
    });

    const prepare = async (turn: OriginTurn) => {
      // The root as the kernel holds it, never as the turn names it: settings, the session temp and
      // the person's binding are per root, and a turn naming another conversation's root is refused.
      const scope = settingsScopeOf(turn);
      const root = await sessionService.rootOf(turn.session.id, { ...(turn.session.rootId !== undefined ? { claimed: turn.session.rootId } : {}), scope });
      current.set(root, await sessionService.settings(turn.session.id, { scope }));
      const principal = auth.principalOf(turn);
      // A person's own binding in the session first (the docker deployment's user space), then the session's.
      const binding = bindings.get(personKey(root, settingsScopeOf(turn))) ?? bindings.get(root) ?? defaultBinding;
      const sessionTmp = await ensureSessionTmp(binding.tmp ?? paths.tmp, root);
      // Read again for every call, not only when the binding was made: a `core.hooksPath` set while
      // the daemon runs (`husky init`, `git config core.hooksPath .githooks`) must be a landing at
      // once, or a sandboxed command writes a hook the person's next commit runs on the host.
      // and what the .envrc files at and above the main directory load, which direnv runs at the next cd there
      const hooks = [...hooksPathLandings(binding.home, gitConfig), ...envrcLandingsOf(binding.home)];
      const hooksId = hooks.map((h) => ('path' in h ? `p:${h.path}` : `r:${h.pattern}`)).join('\u0000');
      const currentReach = (): Reach => {
        const settings = current.get(root);
        if (settings === undefined) throw new Error(`reach: the settings of session '${root}' are unknown; refusing to judge without them.`);
        return reaches.get(binding, `${reachKeyOf(principal, settings.tier, settings.boundary, sessionTmp)}\u0000${hooksId}`, () =>
          resolveReach({
            principal,
            tier: settings.tier,
            onBoundary: settings.boundary,
            place: { home: binding.home },
            binding: { extraRoots: binding.extraRoots, worktrees: binding.worktrees },
            gitDirs: binding.gitDirs,
            sessionTmp,
            localPorts: config.localPorts,
            lists: listsOf(binding, hooks, hooksId),
            paths,
            toolchainCaches: binding.caches ?? toolchainCaches,
          }),
        );
      };
      return { binding, sessionTmp, currentReach };
    };

    ctx.provide(reachView, { instance: () => instance, reachOf: async (turn) => (await prepare(turn)).currentReach() });

    ctx.provide(reach, {
      async forCall(turn) {
        const { binding, sessionTmp, currentReach } = await prepare(turn);
        const issued = currentReach();
        return issueCredential({
          turn,
          exec: issued.exec,
          ...(issued.exec !== 'none' ? { home: binding.home } : {}),
          sessionTmp,
          userHome: instance.userHome,
          current: currentReach,
          approval: () => ctx.maybe(approval),
          ...(personSpaces !== undefined ? { personSpaces } : {}),
          ownerEnv: async () => (await loginEnv()).env,
          secretEnv: config.env,
        });
      },
    });
  },
});
