// How the suite launches a browser. These machines cannot download Playwright's
// own Chromium build, so every run uses Debian's package (installed by
// scripts/ensure-deps.sh). Playwright's default chromiumSandbox: false already
// passes --no-sandbox; the flags below keep a browser on a closed network quiet
// (no update checks, sync or background requests that fail and log noise).
export const chromiumExecutablePath = process.env.RVPLAY_CHROMIUM ?? '/usr/bin/chromium';

export const chromiumArgs = [
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
  '--disable-sync',
];
