/**
 * Where a landing is:
 * - `anywhere`: a regex tail matched after any `/` (in every project, at any depth);
 * - `home`: paths relative to the user's home, with everything under them (`tree`) or exactly;
 *   `{user}` in it stands for the user's login name (the entry is left out when that is unknown);
 * - `homePattern`: a regex tail matched after the user's home;
 * - `self`: the instance's own `self/` directory.
 */
export type LandingPlace =
  | { readonly anywhere: string }
  | { readonly home: string | readonly string[]; readonly tree: boolean }
  | { readonly homePattern: string }
  | { readonly self: true };

/** Shell rc and profile files in the user's home, for every common shell and the X session. */
export const SHELL_STARTUP_FILES = [
  '.profile',
  '.bashrc',
  '.bash_profile',
  '.bash_login',
  '.bash_logout',
  '.bash_aliases',
  '.zshenv',
  '.zprofile',
  '.zshrc',
  '.zlogin',
  '.zlogout',
  '.kshrc',
  '.mkshrc',
  '.cshrc',
  '.tcshrc',
  '.login',
  '.logout',
  '.xprofile',
  '.xsessionrc',
  '.xinitrc',
] as const;

/** The groups of the table, in the order the landing list is built. */
export const LANDING_GROUPS = ['instance', 'git', 'shell', 'editor', 'cache', 'project'] as const;
/** One of {@link LANDING_GROUPS}. */
export type LandingGroup = (typeof LANDING_GROUPS)[number];

/** One landing: where it is, why writing it is dangerous, and the tool that executes or obeys it. */
export interface LandingEntry {
  readonly id: string;
  readonly group: LandingGroup;
  readonly place: LandingPlace;
  /** What makes a write there persistence or execution. */
  readonly reason: string;
  /** The tool that runs it or obeys it on its own. */
  readonly tool: string;
  /** Only on these platforms (all when absent). */
  readonly platforms?: readonly NodeJS.Platform[];
  /**
   * Literal names, relative to a directory (a project directory, or the home for `home`
   * entries), that the rule covers there: the sandbox makes them read-only placeholders when they
   * are missing, since a mount can only cover what exists.
   */
  readonly names?: readonly string[];
  /**
   * `stays`: the node_modules write exception never lifts it. Git finds a repository in whatever
   * directory it runs in, so a `.git` or a bare-repository `HEAD` inside `node_modules` is as
   * dangerous as one outside; no package manager writes one.
   */
  readonly inNodeModules?: 'stays';
  /** For `anywhere`: the instance's data directory is not a project even when it has this name. */
  readonly notTheDataDir?: true;
}

const SHELL = 'the shell, at every start';
const PROJECT_DIR_ITSELF = 'the directory itself: renaming a prepared tree onto it would bring every landing inside at once';

/**
 * The persistence and auto-execution landings, as data: `protectedLists` builds the landing list
 * from it, and the Linux sandbox its placeholder names. An entry is here when a common tool
 * executes the file, or obeys it in a way that runs code, on its own (at start, on `cd`, on a git
 * commit, when a project opens) rather than when the user asks for it by name.
 */
export const LANDING_TABLE = [
  { id: 'self', group: 'instance', place: { self: true }, reason: "the agent's own persona, skills and memory, loaded into every session", tool: 'aalis' },

  // git
  { id: 'git-dir', group: 'git', place: { anywhere: '\\.git' }, inNodeModules: 'stays', reason: 'the repository itself (a directory, or the .git file of a submodule or worktree pointing git elsewhere)', tool: 'git' },
  { id: 'git-hooks', group: 'git', place: { anywhere: '\\.git/hooks(?:/.*)?' }, names: ['.git/hooks'], inNodeModules: 'stays', reason: 'hooks run on commit, checkout, merge, push', tool: 'git' },
  { id: 'git-config', group: 'git', place: { anywhere: '\\.git/config' }, names: ['.git/config'], inNodeModules: 'stays', reason: 'core.fsmonitor, core.hooksPath, aliases and filters run commands', tool: 'git' },
  { id: 'git-config-worktree', group: 'git', place: { anywhere: '\\.git/config\\.worktree' }, inNodeModules: 'stays', reason: 'per-worktree configuration, read like .git/config', tool: 'git' },
  { id: 'git-commondir', group: 'git', place: { anywhere: '\\.git/commondir' }, inNodeModules: 'stays', reason: 'points git at another git directory, with its hooks and config', tool: 'git' },
  { id: 'git-modules', group: 'git', place: { anywhere: '\\.git/modules(?:/.*)?' }, names: ['.git/modules'], inNodeModules: 'stays', reason: "submodules' git directories, with their hooks and config", tool: 'git' },
  { id: 'git-worktrees', group: 'git', place: { anywhere: '\\.git/worktrees(?:/[^/]+)?' }, inNodeModules: 'stays', reason: 'a worktree entry decides which git directory a working tree uses', tool: 'git' },
  // found by an attack (h106): a command's .git/rebase-merge with `exec` lines, and `git status` told the user to run `git rebase --continue`
  { id: 'git-sequencer', group: 'git', place: { anywhere: '\\.git/(?:rebase-merge|rebase-apply|sequencer)(?:/.*)?' }, inNodeModules: 'stays', reason: 'a rebase or cherry-pick in progress: its todo list runs `exec` lines at `git rebase --continue`, which git status tells the user to run', tool: 'git' },
  { id: 'git-worktree-config', group: 'git', place: { anywhere: '\\.git/worktrees/[^/]+/(?:config\\.worktree|commondir)' }, inNodeModules: 'stays', reason: "a worktree's own configuration and common directory", tool: 'git' },

  // shell and login, in the home
  { id: 'shell-startup', group: 'shell', place: { home: SHELL_STARTUP_FILES, tree: true }, reason: 'read and run at login or at every interactive start', tool: SHELL, names: ['.bashrc', '.profile', '.bash_profile', '.zshrc'] },
  { id: 'fish', group: 'shell', place: { home: '.config/fish', tree: true }, reason: 'config.fish and conf.d run at every start', tool: 'fish' },
  { id: 'ssh', group: 'shell', place: { home: '.ssh', tree: true }, names: ['.ssh'], reason: 'authorized_keys lets anyone in; config runs ProxyCommand and LocalCommand', tool: 'sshd, ssh' },
  { id: 'gitconfig', group: 'shell', place: { home: '.gitconfig', tree: true }, names: ['.gitconfig'], reason: 'the global git config: hooksPath, fsmonitor, aliases, credential helpers', tool: 'git' },
  { id: 'git-xdg', group: 'shell', place: { home: '.config/git', tree: true }, reason: 'the global git config and attributes, XDG location', tool: 'git' },
  { id: 'config-dir', group: 'shell', place: { home: '.config', tree: false }, names: ['.config'], reason: PROJECT_DIR_ITSELF, tool: 'every XDG program' },
  { id: 'local-bin', group: 'shell', place: { home: '.local/bin', tree: true }, reason: 'on PATH (Debian, Ubuntu and Fedora profiles add it): a file there shadows any command', tool: SHELL },
  { id: 'home-bin', group: 'shell', place: { home: 'bin', tree: true }, reason: "on PATH when it exists (Debian's ~/.profile adds it)", tool: SHELL },
  { id: 'launch-agents', group: 'shell', platforms: ['darwin'], place: { home: 'Library/LaunchAgents', tree: true }, reason: 'started at every login', tool: 'launchd' },
  { id: 'library-dir', group: 'shell', platforms: ['darwin'], place: { home: 'Library', tree: false }, reason: PROJECT_DIR_ITSELF, tool: 'launchd' },
  { id: 'systemd-user', group: 'shell', platforms: ['linux'], place: { home: '.config/systemd/user', tree: true }, reason: 'user services, started at login', tool: 'systemd' },
  { id: 'systemd-dir', group: 'shell', platforms: ['linux'], place: { home: '.config/systemd', tree: false }, reason: PROJECT_DIR_ITSELF, tool: 'systemd' },
  { id: 'autostart', group: 'shell', platforms: ['linux'], place: { home: '.config/autostart', tree: true }, reason: 'desktop entries run at login', tool: 'the desktop session' },
  // found by an attack (h108): with the workspace at home, these were written unasked
  { id: 'tool-startup', group: 'shell', place: { home: ['.Rprofile', '.irbrc', '.pryrc', '.tmux.conf', '.gdbinit', '.lldbinit', '.psqlrc', '.sqliterc', '.pythonrc', '.pythonrc.py'], tree: true }, reason: "read at every start of its tool, and able to run commands (tmux's run-shell, gdb's shell, psql's \\!, sqlite's .shell)", tool: 'R, irb, pry, tmux, gdb, lldb, psql, sqlite3, python (PYTHONSTARTUP)' },
  { id: 'cloud-credentials', group: 'shell', place: { home: ['.aws/config', '.aws/credentials', '.kube/config'], tree: true }, reason: "credential_process (AWS) and exec credential plugins (kubectl) run at every call", tool: 'the AWS CLI and SDKs, kubectl' },
  // their XDG places (found by an attack, h109: each landed under an existing $XDG_CONFIG_HOME, and
  // under ~/.config with the workspace at home); ZDOTDIR=~/.config/zsh is a common dotfiles layout
  { id: 'tool-startup-xdg', group: 'shell', place: { home: ['.config/tmux', '.config/gdb', '.config/irb', '.config/starship.toml', '.config/wezterm', '.config/kitty', '.config/alacritty', '.config/zsh', '.config/nushell', '.config/environment.d'], tree: true }, reason: "read at every start of its tool or terminal, and able to run commands (tmux's run-shell, gdb's shell, starship's custom modules, wezterm's Lua, the terminals' shell program, zsh's rc files under ZDOTDIR, nushell's config.nu, the user manager's PATH)", tool: 'tmux, gdb, irb, starship, wezterm, kitty, alacritty, zsh, nushell, systemd' },
  { id: 'direnv-config', group: 'shell', place: { home: '.config/direnv', tree: true }, reason: 'direnvrc and lib/*.sh are sourced before every .envrc', tool: 'direnv' },
  { id: 'ipython-startup', group: 'shell', place: { homePattern: '\\.(?:ipython/profile_[^/]+/(?:startup(?:/.*)?|[^/]+_config\\.py)|jupyter/[^/]+_config\\.py)' }, reason: 'startup/ scripts and *_config.py run at every IPython or Jupyter start', tool: 'IPython, Jupyter' },
  { id: 'ipython-dirs', group: 'shell', place: { homePattern: '\\.(?:ipython(?:/profile_[^/]+)?|jupyter)' }, reason: PROJECT_DIR_ITSELF, tool: 'IPython, Jupyter' },

  // editors: what an editor loads as code when it starts, without asking (themes, colours and
  // state are left out; so are plugin managers' installs that only run when asked)
  { id: 'vim', group: 'editor', place: { homePattern: '\\.(?:vimrc|gvimrc|exrc|vim(?:/.*)?)' }, reason: 'vimrc, and plugin/ autoload/ pack/*/start under ~/.vim, sourced at start', tool: 'vim' },
  { id: 'nvim-config', group: 'editor', place: { home: '.config/nvim', tree: true }, reason: 'init.lua / init.vim and plugin/, sourced at start', tool: 'neovim' },
  { id: 'nvim-data', group: 'editor', place: { home: '.local/share/nvim', tree: true }, reason: 'site/pack/*/start and plugin managers (lazy.nvim) keep plugin code here, loaded at start', tool: 'neovim' },
  { id: 'emacs', group: 'editor', place: { homePattern: '(?:\\.emacs(?:\\.el)?|\\.emacs\\.d(?:/.*)?|\\.doom\\.d(?:/.*)?|\\.spacemacs(?:\\.d(?:/.*)?)?)' }, reason: 'init files and installed packages, evaluated at start', tool: 'emacs' },
  // apart from the entry above so that its $XDG_CONFIG_HOME place is found too (xdg-dirs.ts)
  { id: 'emacs-xdg', group: 'editor', place: { homePattern: '\\.config/(?:emacs|doom)(?:/.*)?' }, reason: 'init files and installed packages, evaluated at start', tool: 'emacs' },
  { id: 'helix', group: 'editor', place: { home: '.config/helix', tree: true }, reason: 'languages.toml names the language servers it starts', tool: 'helix' },
  { id: 'vscode-extensions', group: 'editor', place: { homePattern: '\\.(?:vscode|vscode-server|cursor|windsurf)/extensions(?:/.*)?' }, reason: 'extension code, activated when a window opens', tool: 'VS Code, Cursor, Windsurf' },
  { id: 'vscode-user', group: 'editor', platforms: ['linux'], place: { homePattern: '\\.config/(?:Code|Code - Insiders|VSCodium|Cursor)/User(?:/.*)?' }, reason: 'user settings and tasks: terminal profiles and shell integration run commands', tool: 'VS Code, Cursor' },
  // found by an attack (h106): with the workspace at home, `ln -s ~/x ~/.config/Code` (and
  // `~/.vscode-server -> ~/x`) put an ordinary x/User/settings.json (x/extensions) where VS Code
  // reads its settings (extensions): the folders on the way to a home pattern's landing are landings too
  { id: 'editor-home-dirs', group: 'editor', place: { homePattern: '\\.(?:vscode-server|windsurf)' }, reason: PROJECT_DIR_ITSELF, tool: 'VS Code, Windsurf' },
  { id: 'editor-config-dirs', group: 'editor', place: { homePattern: '\\.config/(?:Code|Code - Insiders|VSCodium|Cursor)' }, reason: PROJECT_DIR_ITSELF, tool: 'VS Code, Cursor' },
  { id: 'editor-home-dirs-mac', group: 'editor', platforms: ['darwin'], place: { homePattern: 'Library/Application Support(?:/(?:Code|Code - Insiders|VSCodium|Cursor))?' }, reason: PROJECT_DIR_ITSELF, tool: 'VS Code, Cursor' },
  { id: 'vscode-user-mac', group: 'editor', platforms: ['darwin'], place: { homePattern: 'Library/Application Support/(?:Code|Code - Insiders|VSCodium|Cursor)/User(?:/.*)?' }, reason: 'user settings and tasks: terminal profiles and shell integration run commands', tool: 'VS Code, Cursor' },

  // the parts of toolchain caches that execute: landings even inside the writable cache roots
  { id: 'npx', group: 'cache', platforms: ['linux', 'darwin'], place: { home: '.npm/_npx', tree: true }, reason: 'the packages npx runs, reused from here without a new download', tool: 'npx' },
  { id: 'npx-win', group: 'cache', platforms: ['win32'], place: { home: 'AppData/Local/npm-cache/_npx', tree: true }, reason: 'the packages npx runs, reused from here without a new download', tool: 'npx' },
  { id: 'p10k', group: 'cache', platforms: ['linux', 'darwin'], place: { homePattern: '\\.cache/p10k-[^/]*' }, reason: "powerlevel10k's instant prompt and dump, sourced by zsh at every start", tool: 'zsh (powerlevel10k)' },
  { id: 'p10k-named', group: 'cache', platforms: ['linux', 'darwin'], place: { home: '.cache/p10k-instant-prompt-{user}.zsh', tree: true }, reason: 'the instant-prompt file by name, so the sandbox can mount it without a walk', tool: 'zsh (powerlevel10k)' },
  { id: 'p10k-named-zwc', group: 'cache', platforms: ['linux', 'darwin'], place: { home: '.cache/p10k-instant-prompt-{user}.zsh.zwc', tree: true }, reason: 'its compiled form, which zsh loads instead when newer', tool: 'zsh (powerlevel10k)' },
  { id: 'gitstatus', group: 'cache', platforms: ['linux', 'darwin'], place: { home: '.cache/gitstatus', tree: true }, reason: 'the gitstatusd binary powerlevel10k starts with every shell', tool: 'zsh (powerlevel10k)' },
  { id: 'zsh-plugin-caches', group: 'cache', platforms: ['linux', 'darwin'], place: { homePattern: '\\.cache/(?:antidote|prezto|zsh4humans)(?:/.*)?' }, reason: 'plugin code and completion dumps these frameworks source at every start', tool: 'zsh (antidote, prezto, zsh4humans)' },
  // package and tool caches whose files run without a check against a source of truth once
  // there (what a sandboxed command planted would run on the host at the next install or build).
  // The host's caches are not writable in the sandbox at all any more (its tools cache in a home
  // of their own: toolchain-caches.ts); these entries give a write there its reason when asked
  // (granted, it lands in the host's cache)
  { id: 'corepack', group: 'cache', platforms: ['linux'], place: { home: '.cache/node/corepack', tree: true }, reason: 'the package managers corepack runs for every pnpm, yarn and npm command, reused from here without a check of their hashes', tool: 'corepack' },
  { id: 'corepack-mac', group: 'cache', platforms: ['darwin'], place: { home: 'Library/Caches/node/corepack', tree: true }, reason: 'the package managers corepack runs for every pnpm, yarn and npm command, reused from here without a check of their hashes', tool: 'corepack' },
  { id: 'pnpm-cache', group: 'cache', platforms: ['linux'], place: { home: '.cache/pnpm', tree: true }, reason: 'dlx/ holds the packages `pnpm dlx` runs, reused without a new download (the pnpm counterpart of _npx)', tool: 'pnpm dlx' },
  { id: 'pnpm-cache-mac', group: 'cache', platforms: ['darwin'], place: { home: 'Library/Caches/pnpm', tree: true }, reason: 'dlx/ holds the packages `pnpm dlx` runs, reused without a new download (the pnpm counterpart of _npx)', tool: 'pnpm dlx' },
  { id: 'go-build-cache', group: 'cache', platforms: ['linux'], place: { home: '.cache/go-build', tree: true }, reason: 'compiled packages go links into the next build of any program, found by the hash of their inputs and never checked', tool: 'go build' },
  { id: 'go-build-cache-mac', group: 'cache', platforms: ['darwin'], place: { home: 'Library/Caches/go-build', tree: true }, reason: 'compiled packages go links into the next build of any program, found by the hash of their inputs and never checked', tool: 'go build' },
  { id: 'go-mod', group: 'cache', platforms: ['linux', 'darwin'], place: { home: 'go/pkg/mod', tree: true }, reason: 'module sources go compiles, taken from here without checking them against go.sum again once extracted', tool: 'go build' },
  { id: 'uv-cache', group: 'cache', platforms: ['linux', 'darwin'], place: { home: '.cache/uv', tree: true }, reason: 'unpacked wheels uv links into virtual environments (hard links: the same files), and the tools `uvx` runs', tool: 'uv, uvx' },
  { id: 'poetry-venvs', group: 'cache', platforms: ['linux'], place: { home: '.cache/pypoetry/virtualenvs', tree: true }, reason: "the projects' virtual environments poetry runs commands in", tool: 'poetry' },
  { id: 'poetry-venvs-mac', group: 'cache', platforms: ['darwin'], place: { home: 'Library/Caches/pypoetry/virtualenvs', tree: true }, reason: "the projects' virtual environments poetry runs commands in", tool: 'poetry' },
  { id: 'playwright-browsers', group: 'cache', platforms: ['linux'], place: { home: '.cache/ms-playwright', tree: true }, reason: 'the browser builds playwright starts, used as found', tool: 'playwright' },
  { id: 'playwright-browsers-mac', group: 'cache', platforms: ['darwin'], place: { home: 'Library/Caches/ms-playwright', tree: true }, reason: 'the browser builds playwright starts, used as found', tool: 'playwright' },
  { id: 'cargo-sources', group: 'cache', platforms: ['linux', 'darwin'], place: { home: '.cargo/registry/src', tree: true }, reason: "extracted crate sources (build.rs, proc macros) cargo compiles and runs, reused once a .cargo-ok is there (the verified archives stay in registry/cache, writable)", tool: 'cargo build' },
  { id: 'cargo-git-checkouts', group: 'cache', platforms: ['linux', 'darwin'], place: { home: '.cargo/git/checkouts', tree: true }, reason: 'checked-out git dependencies cargo compiles and runs, reused as found', tool: 'cargo build' },
  { id: 'maven-repository', group: 'cache', platforms: ['linux', 'darwin'], place: { home: '.m2/repository', tree: true }, reason: 'the jars and plugins maven loads, used as found (checksums are checked only on download)', tool: 'maven' },
  { id: 'gradle-caches', group: 'cache', platforms: ['linux', 'darwin'], place: { home: '.gradle/caches', tree: true }, reason: 'the jars and compiled build scripts gradle loads, used as found', tool: 'gradle' },
  { id: 'pre-commit-cache', group: 'cache', platforms: ['linux', 'darwin'], place: { home: '.cache/pre-commit', tree: true }, reason: 'the hook repositories pre-commit runs on every commit', tool: 'pre-commit' },

  // project files, in every project
  { id: 'envrc', group: 'project', place: { anywhere: '\\.envrc' }, names: ['.envrc'], reason: 'run on cd', tool: 'direnv' },
  { id: 'vscode-tasks', group: 'project', place: { anywhere: '\\.vscode/tasks\\.json' }, names: ['.vscode/tasks.json'], reason: 'tasks with runOn folderOpen', tool: 'VS Code' },
  { id: 'vscode-settings', group: 'project', place: { anywhere: '\\.vscode/settings\\.json' }, names: ['.vscode/settings.json'], reason: 'terminal profiles, interpreter and linter paths run programs', tool: 'VS Code' },
  { id: 'code-workspace', group: 'project', place: { anywhere: '[^/]*\\.code-workspace' }, reason: 'workspace settings and tasks, like .vscode', tool: 'VS Code' },
  { id: 'husky', group: 'project', place: { anywhere: '\\.husky(?:/.*)?' }, names: ['.husky'], reason: 'git hooks installed by husky', tool: 'git (husky)' },
  { id: 'pre-commit-config', group: 'project', place: { anywhere: '\\.pre-commit-config\\.yaml' }, names: ['.pre-commit-config.yaml'], reason: 'names the hooks run on every commit', tool: 'pre-commit' },
  { id: 'lefthook', group: 'project', place: { anywhere: '(?:\\.?lefthook(?:-local)?\\.(?:ya?ml|jsonc?|toml)|\\.lefthook(?:-local)?(?:/.*)?)' }, names: ['lefthook.yml', '.lefthook.yml', 'lefthook-local.yml', '.lefthook'], reason: 'git hooks and the scripts they run, on every commit', tool: 'git (lefthook)' },
  // found by an attack (h104): husky's usual pre-commit hook is `npx lint-staged`, which runs the commands its config names on every commit
  { id: 'lint-staged', group: 'project', place: { anywhere: '(?:\\.lintstagedrc(?:\\.(?:json|ya?ml|js|cjs|mjs|ts|cts|mts))?|lint-staged\\.config\\.(?:js|cjs|mjs|ts|cts|mts))' }, reason: 'names the commands the usual husky pre-commit hook (`npx lint-staged`) runs on every commit', tool: 'git (husky, lint-staged)' },
  { id: 'github', group: 'project', place: { anywhere: '\\.github/(?:workflows|actions)(?:/.*)?' }, names: ['.github/workflows'], reason: "workflows and local actions, run on push with the repository's secrets", tool: 'GitHub Actions' },
  // mise reads mise.toml, .mise.toml and their .local and environment forms, and config*.toml and
  // conf.d/*.toml in mise/, .mise/ and .config/mise/: the directories themselves are landings too,
  // or a symlink (or a rename) named like one would bring a prepared tree in whole
  { id: 'mise', group: 'project', place: { anywhere: '(?:\\.config/)?(?:\\.?mise(?:\\.[^/]*)?\\.toml|\\.?mise(?:/(?:config[^/]*\\.toml|conf\\.d(?:/.*)?))?)' }, names: ['mise.toml', '.mise.toml', 'mise.local.toml', '.mise.local.toml', '.mise'], reason: 'env._.source and hooks run on cd', tool: 'mise' },
  // found by an attack: a pod export carried a project's .cargo/config.toml into the workspace
  { id: 'cargo-config', group: 'project', place: { anywhere: '\\.cargo/config(?:\\.toml)?' }, names: ['.cargo/config.toml', '.cargo/config'], reason: 'build.rustc-wrapper, target runners and aliases name programs cargo runs at build, run and test, in the directory and every one below', tool: 'cargo' },
  { id: 'tool-versions', group: 'project', place: { anywhere: '\\.tool-versions' }, names: ['.tool-versions'], reason: 'a `path:` version puts a directory the file names on PATH at every cd', tool: 'asdf, mise' },
  { id: 'devcontainer', group: 'project', place: { anywhere: '(?:\\.devcontainer(?:/.*)?|\\.devcontainer\\.json)' }, names: ['.devcontainer', '.devcontainer.json'], reason: 'postCreate/postStart commands, features, mounts', tool: 'Dev Containers (VS Code, devcontainer CLI)' },
  { id: 'idea', group: 'project', place: { anywhere: '\\.idea(?:/.*)?' }, names: ['.idea'], reason: 'run configurations and startup tasks, file watchers', tool: 'JetBrains IDEs' },
  { id: 'package-manager-rc', group: 'project', place: { anywhere: '(?:\\.npmrc|\\.yarnrc(?:\\.yml)?|\\.pnpmfile\\.cjs)' }, names: ['.npmrc', '.yarnrc.yml', '.pnpmfile.cjs'], reason: 'node-options, script-shell, yarnPath and the pnpmfile run code on the next install', tool: 'npm, yarn, pnpm' },
  { id: 'claude-settings', group: 'project', place: { anywhere: '\\.claude/settings[^/]*\\.json' }, names: ['.claude/settings.json', '.claude/settings.local.json'], reason: 'hooks and permissions of the agent', tool: 'Claude Code' },
  // found by an attack: the rest of Claude Code's project folder runs too (hooks the settings name, skills, agents, commands)
  { id: 'claude-code', group: 'project', place: { anywhere: '\\.claude/(?:hooks|skills|agents|commands)(?:/.*)?' }, reason: 'hook scripts its settings run, and skills, subagents and commands it follows on its own', tool: 'Claude Code' },
  { id: 'mcp', group: 'project', place: { anywhere: '\\.mcp\\.json' }, names: ['.mcp.json'], reason: 'MCP servers started by agents', tool: 'Claude Code and other agents' },
  { id: 'cursor', group: 'project', place: { anywhere: '\\.cursor/(?:hooks\\.json|hooks(?:/.*)?|mcp\\.json|environment\\.json|rules(?:/.*)?)' }, reason: 'hooks, MCP servers, environment and rules', tool: 'Cursor' },
  { id: 'codex', group: 'project', place: { anywhere: '\\.codex/(?:config\\.toml|rules(?:/.*)?|hooks(?:\\.json)?(?:/.*)?)' }, reason: 'configuration, rules and hooks', tool: 'Codex' },
  { id: 'gemini', group: 'project', place: { anywhere: '\\.gemini(?:/.*)?' }, names: ['.gemini'], reason: 'settings (hooks, MCP servers, tool policy) and commands', tool: 'Gemini CLI' },
  { id: 'agent-instructions', group: 'project', place: { anywhere: '(?:AALIS|AGENTS|CLAUDE|CLAUDE\\.local|GEMINI)\\.md' }, names: ['AALIS.md', 'AGENTS.md', 'CLAUDE.md', 'CLAUDE.local.md', 'GEMINI.md'], reason: 'instructions agents obey on their own', tool: 'Aalis, Codex, Claude Code, Gemini CLI' },
  { id: 'cursorrules', group: 'project', place: { anywhere: '\\.cursorrules' }, names: ['.cursorrules'], reason: 'instructions the agent obeys on its own', tool: 'Cursor' },
  { id: 'editor-project-config', group: 'project', place: { anywhere: '(?:\\.vscode/mcp\\.json|\\.zed/(?:settings|tasks)\\.json|\\.helix/languages\\.toml)' }, reason: 'MCP servers, language servers and tasks the editor starts when the folder opens', tool: 'VS Code, Zed, Helix' },
  // a `path` toolchain (rustup 1.25+) names a folder whose cargo and rustc the proxies run, rust-analyzer's included, when a project opens
  { id: 'rust-toolchain', group: 'project', place: { anywhere: 'rust-toolchain(?:\\.toml)?' }, names: ['rust-toolchain', 'rust-toolchain.toml'], reason: "a `path` toolchain names a folder whose cargo and rustc rustup runs for every cargo and rustc command in the directory and every one below, and for the editor's rust-analyzer when the project opens", tool: 'rustup (cargo, rustc, rust-analyzer)' },
  { id: 'jj', group: 'project', place: { anywhere: '\\.jj(?:/repo(?:/config\\.toml)?)?' }, names: ['.jj/repo/config.toml'], reason: 'the repository config jj read from the working tree before its secure config (0.38): aliases, fix tools, pager and diff tools its commands run', tool: 'jj' },
  { id: 'sapling', group: 'project', place: { anywhere: '\\.sl(?:/config)?' }, names: ['.sl/config'], reason: '[hooks] and [extensions] run on every sl command in the repository', tool: 'sapling' },
  { id: 'hg', group: 'project', place: { anywhere: '\\.hg/hgrc' }, names: ['.hg/hgrc'], reason: '[hooks] and [extensions] run on every hg command in the repository', tool: 'mercurial' },
  // found by an attack: a command made aalis.config.json in the workspace, and every aalis command
  // started below it then took that folder's data/ (the daemon would load the plugins it names)
  { id: 'aalis-config', group: 'project', place: { anywhere: 'aalis\\.config\\.json' }, names: ['aalis.config.json'], reason: 'makes its folder a deployment: aalis commands below it use its data/, and the daemon loads the plugins it names', tool: 'aalis' },
  { id: 'tool-dirs', group: 'project', place: { anywhere: '\\.(?:vscode|claude|cursor|codex|github|zed|helix|hg|cargo|config)' }, names: ['.vscode', '.claude', '.cursor', '.codex', '.github'], reason: PROJECT_DIR_ITSELF, tool: 'VS Code, Claude Code, Cursor, Codex, GitHub, cargo, mise' },
  { id: 'project-aalis', group: 'project', place: { anywhere: '\\.aalis(?:/.*)?' }, notTheDataDir: true, names: ['.aalis'], reason: "a project's own Aalis configuration", tool: 'aalis' },
] as const satisfies readonly LandingEntry[];

/** The id of an entry of {@link LANDING_TABLE}. */
export type LandingId = (typeof LANDING_TABLE)[number]['id'];


/**
 * The placeholder names the table gives: every `names` of every entry, in table order, without
 * repeats. A sandbox that can only protect what exists makes these read-only when missing.
 */
export function landingNames(): readonly string[] {
  const names = new Set<string>();
  for (const entry of LANDING_TABLE as readonly LandingEntry[]) for (const n of entry.names ?? []) names.add(n);
  return [...names];
}

/** The bare-repository disguise: a `HEAD` file makes git take its directory for a repository. */
export const BARE_REPO_HEAD_PATTERN = '^.*/HEAD$';
