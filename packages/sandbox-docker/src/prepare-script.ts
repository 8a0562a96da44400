/**
 * How a fix text names the script that starts a local engine and builds the images without a
 * registry (scripts/prepare.sh, shipped with the package): its path depends on how the package
 * was installed, so both forms are named.
 */
export const PREPARE_SCRIPT_HINT = 'bash packages/sandbox-docker/scripts/prepare.sh as root (in an npm project: node_modules/@aalis/sandbox-docker/scripts/prepare.sh)';
