// What the console's browser suites do first: open the console of a test server in a new page of
// Chromium and sign in, until the page says its event stream is live. Page errors go to the test log.
import type { Browser, Page } from 'playwright-core';

export interface SignIn {
  readonly user?: string;
  readonly password?: string;
  readonly viewport?: { readonly width: number; readonly height: number };
}

export async function signInToConsole(browser: Browser, serverUrl: string, options: SignIn = {}): Promise<Page> {
  const page = await browser.newPage(options.viewport ? { viewport: options.viewport } : {});
  page.on('pageerror', (err) => console.error('page error:', err));
  await page.goto(`${serverUrl}/console`);
  await page.fill('#login-user', options.user ?? 'asterisk');
  await page.fill('#login-password', options.password ?? 'asterisk');
  await page.click('#login-submit');
  await page.waitForFunction(() => document.getElementById('status')?.textContent === 'live');
  return page;
}
