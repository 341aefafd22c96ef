import type { Deps } from '../../deps';
import { currentUser } from '../../auth/guards';
import { ApiRouter } from '../../http/api-router';
import { MessageBody, ValidationErrorBody } from '../../http/openapi';
import { EmailPreferences, EmailPreferencesBody } from './emails.schemas';
import { emailPreferencesService } from './emails.service';

const failure = (description: string) => ({ description, schema: MessageBody });

export function emailsRoutes({ db, docs }: Deps) {
  const api = new ApiRouter({ docs, db }, '/api', 'Emails');
  const preferences = emailPreferencesService(db);

  api.get(
    '/email-preferences',
    {
      operationId: 'getEmailPreferences',
      summary: 'Which emails you get',
      description:
        "Your own switches (My account): the daily low-stock digest (managers and admins; it covers the request inbox's " +
        '"ready to fulfil" emails too), order received (everyone), ' +
        'backup failed or overdue (admins). Only the switches your role has are present. A sale receipt is not a ' +
        'switch: the counter ticks it per sale (`emailReceipt` on the sale).',
      access: 'auth',
      responses: { 200: { description: 'Your switches', schema: EmailPreferences }, 401: failure('Not signed in') },
    },
    async (req, res) => {
      res.json(await preferences.get(currentUser(req)));
    },
  );

  api.patch(
    '/email-preferences',
    {
      operationId: 'setEmailPreferences',
      summary: 'Switch emails on or off',
      description: 'Sets the switches given; the others stay. Answers all your switches.',
      access: 'auth',
      body: EmailPreferencesBody,
      responses: {
        200: { description: 'Your switches', schema: EmailPreferences },
        400: {
          description: 'A switch that is not a boolean, or one your role does not have',
          schema: ValidationErrorBody,
        },
        401: failure('Not signed in'),
      },
    },
    async (req, res) => {
      res.json(await preferences.set(currentUser(req), req.input.body));
    },
  );

  return api.router;
}
