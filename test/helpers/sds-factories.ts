import type { Knex } from 'knex';
import { renderPdf } from './purchasing-factories';

/**
 * Gives an item hazard data (issue 43) through the test database handle, as other factories set
 * up rows. The items API gains its `hazard` field in another part of issue 43; once it has, this
 * can send PATCH /api/items/{id} {hazard} instead without changing the tests that call it.
 */
export async function setItemHazards(
  db: Knex,
  itemId: number,
  hazard: { pictograms?: string[]; hStatements?: string[]; signalWord?: 'Danger' | 'Warning' | null } = {},
): Promise<void> {
  await db('items')
    .where({ id: itemId })
    .update({
      hazard_pictograms: hazard.pictograms ?? [],
      hazard_statements: hazard.hStatements ?? [],
      hazard_signal_word: hazard.signalWord ?? null,
    });
}

/** A real one-page PDF (pdfkit) whose text names the sheet, so two versions differ in their bytes. */
export const sdsPdf = (title: string): Promise<Buffer> =>
  renderPdf((doc) => {
    doc.fontSize(16).text('SAFETY DATA SHEET', 50, 50);
    doc.fontSize(10).text(title, 50, 80);
    doc.text('Section 1: Identification of the substance and of the company', 50, 110);
  });

/** YYYY-MM-DD `years` whole years and `days` days before today (UK). */
export function yearsAgo(years: number, days = 0): string {
  const today = new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/London' }).format(new Date());
  const date = new Date(`${today}T00:00:00Z`);
  date.setUTCFullYear(date.getUTCFullYear() - years);
  date.setUTCDate(date.getUTCDate() - days);
  return date.toISOString().slice(0, 10);
}
