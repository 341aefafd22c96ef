import type { Deps } from '../../deps';
import { ApiRouter } from '../../http/api-router';
import { MessageBody, ValidationErrorBody } from '../../http/openapi';
import { presentVatRate, presentVatRateList } from './vat-rates.present';
import { CreateVatRate, RateIdParams, UpdateVatRate, VatRate, VatRateList } from './vat-rates.schemas';
import { vatRatesService } from './vat-rates.service';
import { actorOf } from '../audit/audit.actor';

export function vatRatesRoutes({ db, docs }: Deps) {
  const api = new ApiRouter({ docs, db }, '/api', 'VAT rates');
  const rates = vatRatesService(db);
  const notFound = { description: 'VAT rate not found', schema: MessageBody };
  const invalid = { description: 'Validation failed or rule broken', schema: ValidationErrorBody };

  api.get(
    '/settings/vat-rates',
    {
      operationId: 'listVatRates',
      summary: 'All VAT rates',
      description:
        'The default rate first. Exactly one rate is the default; it applies to every item without its own rate.',
      access: 'admin',
      responses: { 200: { description: 'Rates', schema: VatRateList } },
    },
    async (_req, res) => {
      res.json(presentVatRateList(await rates.list()));
    },
  );

  api.post(
    '/settings/vat-rates',
    {
      operationId: 'createVatRate',
      summary: 'Create a VAT rate',
      description:
        'rate is a fraction within 0..1. isDefault true makes it the default and clears the previous default.',
      access: 'admin',
      body: CreateVatRate,
      responses: { 201: { description: 'Created', schema: VatRate }, 400: invalid },
    },
    async (req, res) => {
      const body = req.input.body;
      res.status(201).json(presentVatRate(await rates.create(body, actorOf(req))));
    },
  );

  api.put(
    '/settings/vat-rates/:rateId',
    {
      operationId: 'updateVatRate',
      summary: 'Update a VAT rate',
      description:
        'Body: any of name, rate, isDefault. isDefault true makes this the default (the previous default is cleared); ' +
        'isDefault false on the default rate is a 400 (choose another default instead). Answers 200 with the updated rate.',
      access: 'admin',
      params: RateIdParams,
      body: UpdateVatRate,
      responses: { 200: { description: 'Updated', schema: VatRate }, 400: invalid, 404: notFound },
    },
    async (req, res) => {
      const { rateId } = req.input.params;
      const body = req.input.body;
      res.json(presentVatRate(await rates.update(rateId, body, actorOf(req))));
    },
  );

  api.delete(
    '/settings/vat-rates/:rateId',
    {
      operationId: 'deleteVatRate',
      summary: 'Delete a VAT rate',
      description: 'The default rate cannot be deleted (400). Items keep their own stored rate values.',
      access: 'admin',
      params: RateIdParams,
      responses: { 204: 'Deleted', 400: { description: 'Default rate', schema: MessageBody }, 404: notFound },
    },
    async (req, res) => {
      const { rateId } = req.input.params;
      await rates.delete(rateId, actorOf(req));
      res.status(204).end();
    },
  );

  return api.router;
}
