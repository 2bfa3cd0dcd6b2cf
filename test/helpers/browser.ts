import type { Browser } from 'playwright-core';
import { chromium } from 'playwright-core';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { findChromium } = require('../../scripts/chromium-tools') as {
  findChromium(): { path: string; source: string } | null;
};

/**
 * Headless Chromium for browser tests: Debian's package (or CHROMIUM_PATH) driven by playwright-core,
 * which downloads no browser of its own. Where there is none, `browserOrReason` says why, and tests
 * skip with that message — except when REELFLOW_REQUIRE_BROWSER=1 (set by .ci/run, which installs
 * the package), where a missing browser fails the test instead of hiding it.
 */
export const BROWSER_REQUIRED = process.env.REELFLOW_REQUIRE_BROWSER === '1';

export type BrowserOrReason = { browser: Browser; reason: null } | { browser: null; reason: string };

export async function browserOrReason(): Promise<BrowserOrReason> {
  const found = findChromium();
  if (!found) {
    const reason =
      'no Chromium found (CHROMIUM_PATH, /usr/bin/chromium, PATH); install it with `apt-get install chromium` or run `node scripts/ensure-chromium.js --install`';
    if (BROWSER_REQUIRED) throw new Error(`browser test cannot run: ${reason}`);
    return { browser: null, reason };
  }
  try {
    const browser = await chromium.launch({
      executablePath: found.path,
      args: ['--no-sandbox', '--disable-dev-shm-usage'],
    });
    return { browser, reason: null };
  } catch (error) {
    const reason = `Chromium at ${found.path} did not start: ${(error as Error).message.split('\n')[0]}`;
    if (BROWSER_REQUIRED) throw new Error(`browser test cannot run: ${reason}`);
    return { browser: null, reason };
  }
}

/** Says loudly, once, why a browser test did not run. */
export function announceSkip(testName: string, reason: string): void {
  process.stderr.write(`\n*** ${testName}: SKIPPED — ${reason}\n\n`);
}
