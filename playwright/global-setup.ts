// Runs once before the suite: launches Debian's Chromium the way the tests
// will and prints its version, so a Chromium upgrade that drifts away from the
// revision Playwright was built against is visible in every log.
import { chromium, type FullConfig } from '@playwright/test';
import { chromiumArgs, chromiumExecutablePath } from './chromium';

export default async function globalSetup(config: FullConfig): Promise<void> {
  const browser = await chromium.launch({ executablePath: chromiumExecutablePath, args: chromiumArgs });
  try {
    const baseURL = config.projects[0]?.use.baseURL;
    console.log(`rvplay e2e: Chromium ${browser.version()} (${chromiumExecutablePath}), server ${baseURL}`);
  } finally {
    await browser.close();
  }
}
