import fs from 'node:fs/promises';
import http from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, expect, vi } from 'vitest';
import { testApp, type TestApp } from './app';
import { TEST_PASSWORD } from './factories';

const SCREENSHOT_DIR = path.resolve(import.meta.dirname, '../../test-screenshots');
/** The sizes screenshots are taken at; the last is a phone's. */
export const VIEWPORTS = [
  { width: 1280, height: 800 },
  { width: 768, height: 1024 },
  { width: 390, height: 844 },
] as const;
export const PHONE = VIEWPORTS[2];

/** A browser test drives a real server and Chromium on a shared 2-core machine: it gets longer than an API test. */
const BROWSER_TEST_TIMEOUT_MS = 90_000;
/** A missing element fails with its locator's name, well before the test's own timeout. */
const ELEMENT_TIMEOUT_MS = 20_000;

// Chrome reports every 4xx/5xx answer as this console error; the response check below judges those instead.
const HTTP_STATUS_CONSOLE = /^Failed to load resource: the server responded with a status of \d+/;
// htmx logs a request it abandoned (the page reloaded or left while a debounced search was in
// flight, hx-sync replacing it) as these errors; like a request aborted by navigating away (see
// requestfailed below) that is not a failure, and a request that really failed is reported by the
// response and requestfailed checks.
const HTMX_ABANDONED = /^htmx:(sendAbort|afterRequest)\b/;

export type BrowserApp = {
  t: TestApp;
  baseUrl: string;
  /** A page in a fresh context (its own cookies), watched for console errors, failed requests, CSP violations and HTTP errors. */
  newPage(): Promise<Page>;
  /** HTTP error statuses this test expects to see (a refused scan answers 422); any other 4xx or 5xx fails the test. */
  expectHttpErrors(...statuses: number[]): void;
  /** Signs in through the sign-in form, as a person does. */
  signIn(page: Page, user: { email: string }, password?: string): Promise<void>;
  /**
   * A new page at path, signed in as the user through the API's sign-in (the same session
   * cookie the form gives; the form itself is the sign-in pages' tests' subject, and a sign-in
   * through it costs a browser test two page loads more).
   */
  openAs(user: { email: string }, path: string): Promise<Page>;
};

export type BrowserOptions = {
  /**
   * Chromium flags this file needs beyond the shared browser's (a fake camera): the file gets a
   * Chromium of its own, launched with them at its first page (so a beforeAll can make the files
   * they name) and closed after its tests. The other files keep sharing the worker's browser.
   */
  extraArgs?: () => string[];
  /** run the outbox's delivery worker beside the app (emails to a test SMTP server, webhooks) */
  deliverOutbox?: boolean;
};

/**
 * The real server on its own test database, listening on a port, and Debian's Chromium driving it.
 * Call once at the top of a test file; every test fails if any of its pages logged a console
 * error, had a request fail, met a CSP violation or got an HTTP error status it did not expect.
 */
export function useBrowserApp(env: Record<string, string> = {}, options: BrowserOptions = {}): BrowserApp {
  let server: http.Server;
  let ownBrowser: Promise<Browser> | undefined;
  const browser = () => {
    if (!options.extraArgs) return workerBrowser();
    ownBrowser ??= launchChromium(options.extraArgs());
    return ownBrowser;
  };
  let contexts: BrowserContext[] = [];
  let problems: string[] = [];
  let expectedStatuses = new Set<number>();
  const app = {} as BrowserApp;
  vi.setConfig({ testTimeout: BROWSER_TEST_TIMEOUT_MS });

  beforeAll(async () => {
    app.t = await testApp(env, { deliverOutbox: options.deliverOutbox });
    server = http.createServer(app.t.app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    app.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterEach(async () => {
    // what the pages did during the test; a request still in flight that closing them aborts
    // (htmx logs its sendAbort as a console error) is not the test's
    const found = problems;
    problems = [];
    await Promise.all(contexts.map((c) => c.close()));
    contexts = [];
    problems = [];
    expectedStatuses = new Set();
    expect(found, 'problems seen by the browser').toEqual([]);
  });

  afterAll(async () => {
    const closed = new Promise((resolve) => server?.close(resolve));
    server?.closeAllConnections();
    await closed;
    await (await ownBrowser?.catch(() => undefined))?.close();
    await app.t?.close();
  });

  app.expectHttpErrors = (...statuses) => statuses.forEach((s) => expectedStatuses.add(s));

  app.newPage = async () => {
    const context = await (
      await browser()
    ).newContext({
      baseURL: app.baseUrl,
      viewport: VIEWPORTS[0],
      locale: 'en-GB',
      timezoneId: 'Europe/London',
    });
    contexts.push(context);
    await context.addInitScript({
      content:
        "document.addEventListener('securitypolicyviolation', (e) => console.error('CSP violation: ' + e.violatedDirective + ' ' + e.blockedURI));",
    });
    const page = await context.newPage();
    page.setDefaultTimeout(ELEMENT_TIMEOUT_MS);
    page.on('console', (msg) => {
      if (msg.type() === 'error' && !HTTP_STATUS_CONSOLE.test(msg.text()) && !HTMX_ABANDONED.test(msg.text()))
        problems.push(`console error: ${msg.text()}`);
    });
    page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
    page.on('requestfailed', (req) => {
      // a request the page itself abandoned by navigating away is not a failure
      if (req.failure()?.errorText !== 'net::ERR_ABORTED')
        problems.push(`request failed: ${req.method()} ${req.url()} ${req.failure()?.errorText}`);
    });
    page.on('response', (res) => {
      if (res.status() >= 400 && !expectedStatuses.has(res.status()))
        problems.push(`HTTP ${res.status()}: ${res.request().method()} ${res.url()}`);
    });
    return page;
  };

  app.signIn = async (page, user, password = TEST_PASSWORD) => {
    await page.goto('/login');
    await page.getByLabel('Email').fill(user.email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL((url) => url.pathname !== '/login');
  };

  app.openAs = async (user, path) => {
    const page = await app.newPage();
    const signedIn = await page.request.post('/api/auth/login', {
      data: { email: user.email, password: TEST_PASSWORD },
    });
    expect(signedIn.status(), `signing in as ${user.email}`).toBe(200);
    await page.goto(path);
    return page;
  };

  return app;
}

let launched: Promise<Browser> | undefined;

/**
 * One Chromium for all the files a worker runs (the browser project shares its modules between
 * files): a launch costs a second or more on the 2-core machines, and each test's pages are in
 * contexts of their own, closed after it. Launched again if it went away. Playwright closes it
 * when the worker exits.
 */
async function workerBrowser(): Promise<Browser> {
  const running = await launched?.catch(() => undefined);
  if (running?.isConnected()) return running;
  launched = launchChromium();
  return launched;
}

/** Debian's Chromium, headless, with any extra flags. */
const launchChromium = (extraArgs: string[] = []) =>
  chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', ...extraArgs],
  });

/**
 * With SCREENSHOTS=1, the page at 1280x800, 768x1024 and a phone's 390x844 (or the sizes given) into
 * test-screenshots/ (git-ignored), then back to the size it had; otherwise nothing, as full-page
 * captures cost a test a second or more. `fullPage: false` takes the screen as it stands (what is
 * fixed to its bottom shows there, not halfway down a full page).
 */
export async function screenshot(
  page: Page,
  name: string,
  viewports: readonly { width: number; height: number }[] = VIEWPORTS,
  { fullPage = true } = {},
): Promise<void> {
  if (process.env.SCREENSHOTS !== '1') return;
  await fs.mkdir(SCREENSHOT_DIR, { recursive: true });
  const size = page.viewportSize() ?? VIEWPORTS[0];
  for (const viewport of viewports) {
    await page.setViewportSize(viewport);
    await page.screenshot({
      path: path.join(SCREENSHOT_DIR, `${name}-${viewport.width}x${viewport.height}.png`),
      fullPage,
    });
  }
  await page.setViewportSize(size);
}

/**
 * Waits until htmx has swapped and settled every response. htmx gives swapped-in content its
 * handlers (hx-trigger) only when it settles, 20 ms after the swap and longer on a busy machine:
 * an event a test sends to a new element before then (a select's change) is lost, as no person
 * could be fast enough to lose it.
 */
export async function htmxSettled(page: Page): Promise<void> {
  // a function, not a string: the pages' CSP allows no eval
  await page.waitForFunction(
    () =>
      !(globalThis as unknown as { document: { querySelector: (selector: string) => unknown } }).document.querySelector(
        '.htmx-request, .htmx-swapping, .htmx-settling',
      ),
  );
}

type AxeViolation = { id: string; impact?: string | null; help: string; nodes: { target: unknown[] }[] };

/**
 * A wedge scanner: the code a key every 3 ms, then Enter, into whatever has the focus. The key events
 * go through CDP with the scanner's own timestamps (the time a page reads as event.timeStamp): on a
 * busy machine keyboard.type's keys reach the page up to 90 ms apart, as slow as a person's.
 */
export async function scanBurst(page: Page, code: string): Promise<void> {
  const cdp = await page.context().newCDPSession(page);
  let pressedAt = Date.now() / 1000;
  for (const key of [...code, 'Enter']) {
    pressedAt += 0.003;
    const text = key === 'Enter' ? '\r' : key;
    const enter = key === 'Enter' ? { code: 'Enter', windowsVirtualKeyCode: 13 } : {};
    await cdp.send('Input.dispatchKeyEvent', {
      type: 'keyDown',
      key,
      text,
      unmodifiedText: text,
      timestamp: pressedAt,
      ...enter,
    });
    await cdp.send('Input.dispatchKeyEvent', { type: 'keyUp', key, timestamp: pressedAt, ...enter });
  }
  await cdp.detach();
}

/**
 * The page's markup without its CSRF tokens: a test that a secret is never shown searches this, since a
 * random token can contain any short digit string (a PIN of 4321 once matched one).
 */
export async function markupWithoutCsrfTokens(page: Page): Promise<string> {
  const tokens = await Promise.all(
    (await page.locator('input[name="_csrf"]').all()).map((input) => input.inputValue()),
  );
  let markup = await page.content();
  for (const token of new Set(tokens)) markup = markup.split(token).join('');
  return markup;
}

/**
 * axe-core over the whole page: no serious or critical violation (labels, contrast, landmarks, focus order).
 * axe-core is put into the page once and run there: @axe-core/playwright's AxeBuilder injects its
 * 500 KB again and opens a blank page for every analysis (1.5 s against 0.2 s a check, some sixty
 * checks in the suite). Playwright's evaluate is not subject to the page's CSP.
 */
export async function expectAccessible(page: Page): Promise<void> {
  if (!(await page.evaluate("typeof window.axe === 'object'"))) await page.evaluate(await axeSource());
  const violations = (await page.evaluate(
    "axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations)",
  )) as AxeViolation[];
  const serious = violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`);
  expect(serious).toEqual([]);
}

let axeScript: Promise<string> | undefined;
const axeSource = () =>
  (axeScript ??= fs.readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8'));
