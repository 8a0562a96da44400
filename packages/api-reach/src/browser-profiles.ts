/** Browser profile and data directories on macOS, relative to the user's home. */
const DARWIN = [
  ...[
    'Google/Chrome',
    'Google/Chrome Beta',
    'Google/Chrome Dev',
    'Google/Chrome Canary',
    'Chromium',
    'Microsoft Edge',
    'Microsoft Edge Beta',
    'Microsoft Edge Dev',
    'Microsoft Edge Canary',
    'BraveSoftware/Brave-Browser',
    'BraveSoftware/Brave-Browser-Beta',
    'BraveSoftware/Brave-Browser-Nightly',
    'Vivaldi',
    'com.operasoftware.Opera',
    'com.operasoftware.OperaGX',
    'Arc',
    'Firefox',
    'zen',
  ].map((dir) => `Library/Application Support/${dir}`),
  'Library/Safari',
  'Library/Containers/com.apple.Safari',
  'Library/Cookies',
] as const;

/** Browser profile and data directories on Linux, relative to the user's home: native, Snap and Flatpak. */
const LINUX = [
  '.config/google-chrome',
  '.config/google-chrome-beta',
  '.config/google-chrome-unstable',
  '.config/chromium',
  '.config/microsoft-edge',
  '.config/microsoft-edge-beta',
  '.config/microsoft-edge-dev',
  '.config/BraveSoftware',
  '.config/vivaldi',
  '.config/opera',
  '.mozilla',
  '.librewolf',
  '.zen',
  'snap/firefox',
  'snap/chromium',
  'snap/brave',
  'snap/opera',
  'snap/vivaldi',
  '.var/app/org.mozilla.firefox',
  '.var/app/org.chromium.Chromium',
  '.var/app/com.google.Chrome',
  '.var/app/com.brave.Browser',
  '.var/app/com.microsoft.Edge',
  '.var/app/com.opera.Opera',
  '.var/app/com.vivaldi.Vivaldi',
  '.var/app/io.gitlab.librewolf-community',
  '.var/app/io.github.ungoogled_software.ungoogled_chromium',
] as const;

/** The browser profile directories of a platform, relative to the user's home (none elsewhere). */
export function browserProfileDirs(platform: NodeJS.Platform): readonly string[] {
  if (platform === 'darwin') return DARWIN;
  if (platform === 'linux') return LINUX;
  return [];
}
