import { HttpError } from '../../http/errors';

/**
 * A scanned or typed code no item answers to. The API answers with its documented message,
 * "No item with barcode '<code>'", which clients rely on; the pages say it in their own words
 * (src/pages/forms.ts unknownCodeMessage), the same on every page, from `itemCode`.
 */
export class UnknownItemCode extends HttpError {
  constructor(
    readonly itemCode: string,
    status = 404,
  ) {
    super(status, `No item with barcode '${itemCode}'`);
  }
}
