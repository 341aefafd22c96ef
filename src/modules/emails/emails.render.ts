import path from 'node:path';
import ejs from 'ejs';
import { FORMATTERS } from '../../lib/format';
import type { EmailPayload } from '../outbox/outbox.queries';
import { switchOfTemplate } from './emails.switches';

/** The name every email is signed with (the pages' header says the same). */
export const SERVICE_NAME = 'Stores';

const EMAIL_VIEWS = path.resolve(import.meta.dirname, '../../../views/emails');

/** A template's name: a file pair views/emails/<name>.text.ejs and .html.ejs (no path, no dots). */
const TEMPLATE_NAME = /^[a-z][a-z0-9-]*$/;

export type RenderedEmail = { text: string; html: string };

/**
 * What every template can use beside its own data: the subject, the service's name, links on
 * PUBLIC_URL (`link('/orders/O1234')`), the formatters, and the My account switch that sends it (the
 * layout's footer names it).
 */
function locals(email: EmailPayload, publicUrl: string) {
  return {
    ...FORMATTERS,
    ...email.data,
    subject: email.subject,
    accountSwitch: switchOfTemplate(email.template)?.describe ?? null,
    serviceName: SERVICE_NAME,
    publicUrl,
    /** the absolute address of a page of the service */
    link: (pagePath: string) => `${publicUrl}${pagePath.startsWith('/') ? '' : '/'}${pagePath}`,
  };
}

/** Plain text is not HTML: it is not escaped (the HTML part is). */
const TEXT = { escape: (value: unknown) => (value === null || value === undefined ? '' : String(value)) };

async function renderPart(template: string, part: 'text' | 'html', values: Record<string, unknown>): Promise<string> {
  const file = path.join(EMAIL_VIEWS, `${template}.${part}.ejs`);
  const layout = path.join(EMAIL_VIEWS, `_layout.${part}.ejs`);
  const options = { cache: true, async: false, ...(part === 'text' ? TEXT : {}) };
  const body = await ejs.renderFile(file, values, { ...options, filename: file });
  return ejs.renderFile(layout, { ...values, body }, { ...options, filename: layout });
}

/**
 * An email's plain-text and HTML parts, each its template in the shared layout
 * (views/emails/_layout.{text,html}.ejs). The data must hold nothing secret: it is written to the outbox.
 */
export async function renderEmail(email: EmailPayload, publicUrl: string): Promise<RenderedEmail> {
  const { template } = email;
  if (!TEMPLATE_NAME.test(template)) throw new Error(`not an email template: ${template}`);
  const values = locals(email, publicUrl);
  const [text, html] = await Promise.all([renderPart(template, 'text', values), renderPart(template, 'html', values)]);
  return { text: text.replace(/\n{3,}/g, '\n\n').trim() + '\n', html };
}
