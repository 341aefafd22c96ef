import { readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderEmail } from '../../src/modules/emails/emails.render';
import { messageIdOf } from '../../src/modules/emails/emails.sender';

const PUBLIC_URL = 'https://stores.example.ac.uk';

/** What every request email is given (requests.service.ts). */
const REQUEST = {
  requestId: 12,
  reference: 'RQ-20261127-12',
  status: 'ready',
  chargeCode: 'CHEM-1',
  requesterName: 'Dr Ada <Byron>',
  requesterEmail: 'ada@example.ac.uk',
  totalAmount: '120.00',
  chargedTotal: '96.00',
  neededBy: '2026-12-01',
  notes: 'For the <teaching> lab',
  comment: 'Fine by me & the grant',
  saleNumber: 'SALE-20261127-40',
  items: [{ name: 'Gloves', sku: 'GLV', quantity: '10', fulfilledQuantity: '8', total: '96.00' }],
  shortfall: [
    {
      itemId: 3,
      itemName: 'Gloves',
      requested: '10',
      fulfilled: '8',
      reason: 'staff',
      why: 'the stores lowered the quantity',
    },
  ],
};

/** Data for each template, as the code that queues it writes it. */
const SAMPLES: Record<string, Record<string, unknown>> = {
  'order-received': {
    orderId: 'O1234',
    supplierName: 'Fisher & <Co>',
    complete: true,
    receivedBy: 'Sam Stores',
    lines: [{ name: 'Gloves', sku: 'GLV', quantity: '10', receivedQuantity: '10' }],
  },
  'sale-receipt': {
    id: 7,
    saleId: 'SALE-20261127-7',
    chargeCode: 'CHEM-1',
    deliveredTo: 'Dr Ada <Byron>',
    createdAt: '2026-11-27T10:00:00.000Z',
    subtotalAmount: '10.00',
    vatAmount: '2.00',
    totalAmount: '12.00',
    lines: [{ name: 'Beaker', sku: 'BKR', quantity: '2', unitPrice: '5.00', total: '12.00' }],
  },
  'low-stock-digest': {
    items: [{ name: 'Gloves', sku: 'GLV', currentStock: '2', minimumStock: '5', category: 'PPE' }],
    since: null,
  },
  'expiry-digest': {
    lots: [
      {
        itemId: 4,
        name: 'Acetone <HPLC>',
        sku: 'ACE',
        lotNumber: 'B2417',
        expiresOn: '2026-11-20',
        quantity: '3',
        status: 'expired',
      },
      {
        itemId: 5,
        name: 'Ethanol',
        sku: 'ETH',
        lotNumber: 'E1',
        expiresOn: '2026-12-20',
        quantity: '2.5',
        status: 'expiring',
      },
    ],
    warningDays: 30,
    since: null,
  },
  'backup-failed': { startedAt: '2026-11-27T02:00:00.000Z', error: 'pg_dump: error: disk on fire' },
  'backup-overdue': { message: 'No scheduled backup has succeeded since 2026-11-25T02:00:00.000Z' },
  'webhook-disabled': {
    endpointId: '4a7c0e1e-2f0b-4c55-9d8e-1f7f3a1b2c3d',
    url: 'https://finance.example.ac.uk/hooks?a=1&b=<2>',
    description: 'Finance <ledger>',
    failingSince: '2026-11-26T09:00:00.000Z',
  },
  'lot-recall': {
    message: 'Stop using it & bring it back to the <teaching> lab',
    itemName: 'Acetone & <Co>',
    sku: 'ACE-1',
    lotNumber: 'B2417',
    expiresOn: '2027-06-30',
    saleNumbers: ['SALE-20261127-7', 'SALE-20261128-2'],
  },
  ...Object.fromEntries(
    [
      'request-approval-needed',
      'request-approved',
      'request-rejected',
      'request-ready',
      'request-shortfall',
      'request-to-fulfil',
      'request-restricted-approved',
    ].map((template) => [template, REQUEST]),
  ),
};

const TEMPLATES = [
  ...new Set(
    readdirSync(path.resolve(import.meta.dirname, '../../views/emails'))
      .filter((f) => !f.startsWith('_'))
      .map((f) => f.replace(/\.(text|html)\.ejs$/, '')),
  ),
];

describe('email templates', () => {
  it('every template has a text and an HTML part and sample data here', () => {
    expect(TEMPLATES.sort()).toEqual(Object.keys(SAMPLES).sort());
  });

  // One test over every template (not it.each): the MCP unit runs count a file's tests by its it( lines.
  it('every template renders in the layout: escaped HTML, plain text as typed, links on PUBLIC_URL', async () => {
    for (const template of TEMPLATES) {
      const { text, html } = await renderEmail(
        { subject: 'Subject <here>', template, data: SAMPLES[template] },
        PUBLIC_URL,
      );
      expect(html, template).toMatch(/^<!doctype html>/);
      expect(html, template).toContain('<title>Subject &lt;here&gt;</title>');
      expect(html, template).toContain(`href="${PUBLIC_URL}/"`);
      expect(text, template).toContain(`Sent by Stores: ${PUBLIC_URL}/`);
      expect(text, template).not.toMatch(/&lt;|&amp;|&#/);
      expect(html, template).not.toMatch(/<(Co|Byron|ledger|teaching|HPLC)>/);
    }
  });

  it('refuses a template name that is not one', async () => {
    await expect(renderEmail({ subject: 's', template: '../layout', data: {} }, PUBLIC_URL)).rejects.toThrow(
      'not an email template',
    );
  });

  it("a message's Message-ID is its outbox id at PUBLIC_URL's host, the same on every attempt", () => {
    expect(messageIdOf('0b6c…', PUBLIC_URL)).toBe('<0b6c…@stores.example.ac.uk>');
  });
});
