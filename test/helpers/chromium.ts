/**
 * Debian's headless Chromium, driven by puppeteer-core, for the tests that look at pages.
 * Without it a suite is skipped with a hint, except in CI, where it must be installed
 * (scripts/install-system-deps.sh) and a missing browser fails.
 */
import { existsSync } from 'node:fs';
import assert from 'node:assert/strict';
import puppeteer, { type Browser } from 'puppeteer-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const HAVE_CHROMIUM = existsSync(CHROMIUM);
/** For `{ skip }`: a reason to skip, or false. */
export const SKIP_WITHOUT_CHROMIUM = !HAVE_CHROMIUM && !process.env.CI ? `chromium not found at ${CHROMIUM}; install it with: bash scripts/install-system-deps.sh` : false;

export async function launchChromium(timeoutMs: number): Promise<Browser> {
  assert.ok(HAVE_CHROMIUM, `chromium not found at ${CHROMIUM}: CI must install it (scripts/install-system-deps.sh)`);
  return puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    // Tests run as root: Chromium's sandbox refuses that.
    args: ['--no-sandbox', '--headless=new', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run', '--no-default-browser-check'],
    timeout: timeoutMs,
    protocolTimeout: timeoutMs * 2,
  });
}
