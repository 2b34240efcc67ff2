import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';

/** Debian's chromium, driven by playwright-core (no browser download is possible here). */
const CHROMIUM = '/usr/bin/chromium';

/** Launches headless Debian chromium; says by name how to get it when it is missing. */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `The browser tests need Debian's chromium at ${CHROMIUM}: run \`apt-get update && apt-get install -y chromium\` (.ci/run does this).`,
    );
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
    ],
  });
}

/** Chromium and one page signed in to a dashboard as `ops` with `token` (basic auth), at a laptop's width. */
export async function operatorPage(token: string, width = 1280): Promise<{ browser: Browser; page: Page }> {
  const browser = await launchChromium();
  const context = await browser.newContext({
    httpCredentials: { username: 'ops', password: token },
    viewport: { width, height: 720 },
  });
  return { browser, page: await context.newPage() };
}
