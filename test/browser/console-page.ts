// What every console browser test does before its first step: build the page's bundle, make its
// screenshot folder, open a headless Chromium (closed by the test's teardown) with pages that log
// the page's own errors, and sign in with a token.
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import type { Teardown } from '@warren/testkit';
import { launchChromium } from './chromium';

const root = path.resolve(__dirname, '..', '..');

/** Builds the console's bundle from this checkout's sources (the broker serves broker/dist/console-assets) and makes the screenshot folder `shots`. */
export function prepareConsole(shots: string): void {
  execFileSync(process.execPath, [path.join(root, 'broker', 'console', 'build.mjs')], { cwd: root, stdio: 'pipe' });
  mkdirSync(shots, { recursive: true });
}

/** A headless Chromium closed on `td`; `newPage` opens a tab that reports the page's uncaught errors. */
export async function openBrowser(td: Teardown): Promise<{ newPage: () => Promise<Page> }> {
  const chrome = await launchChromium();
  td.add(() => chrome.close());
  return {
    newPage: async () => {
      const page = await chrome.context.newPage();
      page.on('pageerror', (err) => console.error('page error:', err.message));
      return page;
    },
  };
}

/** Answers the console's token prompt. */
export async function signIn(page: Page, token: string): Promise<void> {
  await page.getByLabel('Token').fill(token);
  await page.getByRole('button', { name: 'Open the console' }).click();
}
