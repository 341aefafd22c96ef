import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from './helpers/app';
import { buildUser } from './helpers/factories';
import { binaryBody } from './helpers/binary-body';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(() => t.close());

const descriptionOf = (html: string) => /<meta name="description" content="([^"]*)">/.exec(html)?.[1];

describe('GET /favicon.ico', () => {
  it('200 with an icon, to anyone (browsers ask for it on every page, signed in or not)', async () => {
    const res = await t.request
      .get('/favicon.ico')
      .buffer(true)
      .parse(binaryBody as never)
      .expect(200);
    expect(res.headers['content-type']).toMatch(/^image\//);
    // an ICO file: reserved 0, type 1 (icon), at least one image
    expect([...res.body.subarray(0, 4)]).toEqual([0, 0, 1, 0]);
    expect(res.body.readUInt16LE(4)).toBeGreaterThan(0);
  });
});

describe('every page names its icon and says what it is', () => {
  it("the sign-in page, the dashboard and the counter have their own description; other pages the service's", async () => {
    const login = (await t.request.get('/login').expect(200)).text;
    expect(login).toContain('<link rel="icon" href="/favicon.ico">');
    const agent = await t.loginAs(await buildUser(t.db));
    const descriptions = new Map<string, string | undefined>();
    descriptions.set('/login', descriptionOf(login));
    for (const page of ['/', '/counter', '/items', '/sales']) {
      const html = (await agent.get(page).expect(200)).text;
      expect(html, page).toContain('<link rel="icon" href="/favicon.ico">');
      descriptions.set(page, descriptionOf(html));
    }
    expect(Object.fromEntries(descriptions)).toEqual({
      '/login':
        'Sign in to the stores service: the counter, stock, quotes and sales on charge codes, purchasing and finance.',
      '/': 'The stores at a glance: system alerts, low stock, stock value by category and the sales of the last 30 days.',
      '/counter': 'The stores counter: scan items into a basket and sell them on a charge code.',
      '/items':
        'The university stores service: the counter, stock, quotes and sales on charge codes, purchasing and finance.',
      '/sales':
        'The university stores service: the counter, stock, quotes and sales on charge codes, purchasing and finance.',
    });
  });
});
