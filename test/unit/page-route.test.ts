import express, { type ErrorRequestHandler, type RequestHandler } from 'express';
import type { Knex } from 'knex';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { z, ZodError } from 'zod';
import type { Role } from '../../src/auth/roles';
import { HttpError } from '../../src/http/errors';
import { IdParams } from '../../src/http/validate';
import { lotActions, managesLots } from '../../src/modules/lot-control/lot-control.service';
import { isCancellable } from '../../src/modules/orders/orders.policy';
import { attempt, textField } from '../../src/pages/forms';
import { pageAccessOf } from '../../src/pages/page-guards';
import { PageRouter } from '../../src/pages/page-route';

const Rename = z.object({ name: z.string().trim().min(1, { error: 'is required' }) });

/** An app of one declared page route, signed in as `role` (none: a visitor). */
function appAs(role: Role | null) {
  const pages = new PageRouter({} as Knex);
  pages.post(
    '/things/:id',
    { access: 'manager', params: IdParams, form: Rename, fromForm: (body) => ({ name: textField(body.thing) }) },
    async (req, res) => {
      const { id } = req.input.params;
      const result = await attempt(() => req.input.form);
      res.json({ id, result });
    },
  );
  const signIn: RequestHandler = (req, _res, next) => {
    if (role) Object.assign(req, { user: { id: 'u1', role } });
    next();
  };
  const errors: ErrorRequestHandler = (err, _req, res, _next) => {
    if (err instanceof ZodError) return res.status(400).json({ issues: err.issues.map((i) => i.path.join('.')) });
    res.status(err instanceof HttpError ? err.status : 500).json({ message: String(err.message) });
  };
  return { app: express().use(express.urlencoded({ extended: false }), signIn, pages.router, errors), pages };
}

describe('PageRouter: a page route declared as an API route is', () => {
  it('guards by the declared access, which the route table of the pages reads', async () => {
    const { app, pages } = appAs('user');
    const layer = (pages.router.stack as { route?: { stack: { handle: unknown }[] } }[])[0];
    expect(layer.route!.stack.map((l) => pageAccessOf(l.handle)).find(Boolean)).toEqual({ role: 'manager' });
    const refused = await request(app).post('/things/3').type('form').send({ thing: 'x' });
    expect(refused.status).toBe(403);
    const visitor = await request(appAs(null).app).post('/things/3').type('form').send({ thing: 'x' });
    expect(visitor.status).toBe(302);
    expect(visitor.headers.location).toMatch(/^\/login\?next=/);
  });

  it('reads its params and its form through their schemas, a refused form as field errors', async () => {
    const { app } = appAs('manager');
    const ok = await request(app).post('/things/3').type('form').send({ thing: '  Beaker  ' });
    expect(ok.body).toEqual({ id: 3, result: { ok: true, value: { name: 'Beaker' } } });
    const blank = await request(app).post('/things/3').type('form').send({ thing: ' ' });
    expect(blank.body.result).toMatchObject({ ok: false, status: 422, errors: { name: 'is required' } });
    const badId = await request(app).post('/things/abc').type('form').send({ thing: 'Beaker' });
    expect(badId.status).toBe(400);
    expect(badId.body).toEqual({ issues: ['id'] });
  });
});

describe('PageRouter: a declared upload', () => {
  /** An app of one declared upload route whose session holds the form token 'the-token', signed in as a manager. */
  function uploadApp() {
    const pages = new PageRouter({} as Knex);
    pages.post('/things/import', { access: 'manager', upload: { field: 'file', maxBytes: 1024 } }, (req, res) => {
      res.json({ file: req.file?.buffer.toString('utf8') ?? null });
    });
    const signIn: RequestHandler = (req, _res, next) => {
      Object.assign(req, { user: { id: 'u1', role: 'manager' }, session: { csrfToken: 'the-token' } });
      next();
    };
    const errors: ErrorRequestHandler = (err, _req, res, _next) => {
      res.status(err instanceof HttpError ? err.status : (err.status ?? 500)).json({ message: String(err.message) });
    };
    return express().use(signIn, pages.router, errors);
  }

  it("checks the form's CSRF token once multer has read the multipart body: none or a wrong one is 403, before the handler", async () => {
    const app = uploadApp();
    const none = await request(app).post('/things/import').attach('file', Buffer.from('rows'), 'things.json');
    expect(none.status).toBe(403);
    expect(none.body.file).toBeUndefined();
    const wrong = await request(app)
      .post('/things/import')
      .field('_csrf', 'another')
      .attach('file', Buffer.from('rows'), 'things.json');
    expect(wrong.status).toBe(403);
    const ok = await request(app)
      .post('/things/import')
      .field('_csrf', 'the-token')
      .attach('file', Buffer.from('rows'), 'things.json');
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ file: 'rows' });
  });
});

describe('a policy the API and the page both call', () => {
  it('an order is cancellable while pending with nothing received', () => {
    expect(isCancellable('pending', ['0', 0])).toBe(true);
    expect(isCancellable('pending', ['0', '1.5'])).toBe(false);
    expect(isCancellable('partially_received', ['1'])).toBe(false);
    expect(isCancellable('cancelled', ['0'])).toBe(false);
  });
});

describe("a lot's actions: the lot-control service's refusals and the lot pages' buttons", () => {
  const held = new Date('2026-11-01T09:00:00Z');
  it('a lot is written off while it holds stock, quarantined while it is not, released while it is', () => {
    expect(lotActions({ quantity: '4.00', quarantined_at: null })).toEqual({
      writeOff: true,
      quarantine: true,
      release: false,
    });
    expect(lotActions({ quantity: '4.00', quarantined_at: held })).toEqual({
      writeOff: true,
      quarantine: false,
      release: true,
    });
    expect(lotActions({ quantity: '0.00', quarantined_at: held })).toEqual({
      writeOff: false,
      quarantine: false,
      release: true,
    });
  });

  it('lots are managed from the manager role up', () => {
    const as = (role: Role) => ({ id: 'u1', role }) as Express.User;
    expect((['requester', 'user', 'manager', 'admin'] as Role[]).map((role) => managesLots(as(role)))).toEqual([
      false,
      false,
      true,
      true,
    ]);
  });
});
