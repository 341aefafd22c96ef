import type { Db } from '../../db/knex';
import { itemsService, normalisedName, type MatchedItem } from '../items/items.service';
import { sourcesService } from '../sources/sources.service';
import { suppliersService } from '../suppliers/suppliers.service';
import { readInvoicePdf, type ReadInvoice, type UploadedFile } from './invoices.pdf';

/**
 * The least pg_trgm similarity() between a line's name (without its part number) and an item's name
 * for a "probable" match. Measured on invoice wordings of stock items: rewordings of one product
 * score 0.57-0.88 ("Acetone, 1 litre" / "Acetone 1 L" 0.65, "Acetone 1L" 0.64, "Nitrile Gloves Box
 * 100" / "Nitrile gloves (box of 100)" 0.88, "Pipette tips 200ul" / "Pipette tips (200 µl rack)"
 * 0.57, "Lab coat size M" / "Lab coat, size M" 1.0), while different products with similar names
 * score below ("Methanol 2.5L" / "Ethanol absolute 2.5L" 0.44, "Sodium chloride 500g" / "Sodium
 * hydroxide 500g" 0.48, "Acetone 1 L" / "Acetonitrile 1 L" 0.53). Sizes of one product
 * ("Glass beaker 250ml" / "500ml" 0.65) cannot be told apart by trigrams: that is why such a match
 * is only probable, for a person to confirm.
 */
export const PROBABLE_SIMILARITY = 0.55;

/** exact: by the supplier's part number, the item's name or its SKU; probable: a similar name, to review. */
export type MatchKind = 'exact' | 'probable';
export type MatchedBy = 'supplierSku' | 'name' | 'sku' | 'similarity';

export type LineMatch = { kind: MatchKind; by: MatchedBy; item: MatchedItem; similarity: number | null };

/** What a line says beyond its text: the supplier's part number in it, and the item it names. */
export type InvoiceLineMatch = { supplierSku: string | null; match: LineMatch | null };

export type InvoiceLine = { name: string; sku?: string | null };

/** Characters around a word that are punctuation, not part of a part number. */
const EDGE_PUNCTUATION = /^[([{"'«]+|[)\]}"'»,;:]+$/g;
/** A size or count (250ml, 2.5L, 100, 3M): a leading one is the product's, not a catalogue number. */
const MEASURE = /^\d+(?:[.,]\d+)?[a-zµ]{0,3}$/i;
/** What catalogue numbers look like: letters, digits and - / . _, with a digit in it. */
const PART_NUMBER = /^(?=[^\d]*\d)[A-Za-z0-9][A-Za-z0-9./_-]{1,39}$/;
/** A catalogue number of digits alone is long; shorter digits are a quantity or a size. */
const DIGITS_ONLY_PART_NUMBER = /^\d{5,}$/;

const wordsOf = (name: string) =>
  name
    .split(/\s+/)
    .map((w) => w.replace(EDGE_PUNCTUATION, ''))
    .filter((w) => w !== '');

const looksLikePartNumber = (word: string) =>
  PART_NUMBER.test(word) && (!MEASURE.test(word) || DIGITS_ONLY_PART_NUMBER.test(word));

/** A line's name read as "<part number> <name>": the catalogue number glued to the front, when there is one. */
function splitPartNumber(name: string): { partNumber: string | null; rest: string } {
  const words = wordsOf(name);
  const rest = words.slice(1).join(' ');
  return words.length > 1 && looksLikePartNumber(words[0]) && /\p{L}/u.test(rest)
    ? { partNumber: words[0], rest }
    : { partNumber: null, rest: name };
}

const exact = (by: MatchedBy, item: MatchedItem): LineMatch => ({ kind: 'exact', by, item, similarity: null });

/**
 * Matches invoice lines to items: by the supplier's own part number (a word of the line, or the
 * line's sku, equal to a part number of one of the supplier's item sources), else by name (the
 * whole name, or the name without a leading part number, equal to an item's name ignoring case and
 * spacing), else by an item's SKU (the line's sku, or a word of it), all "exact"; else the active
 * item with the most similar name (pg_trgm, at least PROBABLE_SIMILARITY) as "probable", for a
 * person to review. A sku the line carries (typed on the preview, sent in the import) is an item's
 * SKU first: the person's choice comes before anything read from the text. Two statements
 * whatever the number of lines: the supplier's part numbers (when the supplier is known) and the
 * items (itemsService.namedBy).
 */
export function invoiceMatcher(db: Db) {
  return {
    async matchLines(supplierId: string | null, lines: InvoiceLine[]): Promise<InvoiceLineMatch[]> {
      const read = lines.map((line) => {
        const words = wordsOf(line.name);
        const { partNumber, rest } = splitPartNumber(line.name);
        const sku = line.sku?.trim() || null;
        const candidates = [...(sku ? [sku] : []), ...words.filter(looksLikePartNumber)];
        return { line, sku, words, partNumber, rest, candidates };
      });
      const known = supplierId
        ? await sourcesService(db).findBySupplierSkus(
            supplierId,
            read.flatMap((r) => [...(r.sku ? [r.sku] : []), ...r.words]),
          )
        : new Map();
      const items = await itemsService(db).namedBy({
        names: read.flatMap((r) => [r.line.name, r.rest]),
        skus: read.flatMap((r) => r.candidates),
        similarTo: read.map((r) => r.rest),
        minSimilarity: PROBABLE_SIMILARITY,
      });
      const bySku = (value: string) => items.bySku.get(value.toLowerCase());
      const byName = (value: string) => items.byName.get(normalisedName(value));

      return read.map(({ line, sku, words, partNumber, rest, candidates }) => {
        const source = [...(sku ? [sku] : []), ...words]
          .map((w) => known.get(w.toLowerCase()))
          .find((s) => s !== undefined);
        const fromSource = source && { id: source.itemId, name: source.itemName, sku: source.itemSku };
        const chosen = sku ? bySku(sku) : undefined;
        const named = byName(line.name) ?? byName(rest);
        const skuWord = candidates.map(bySku).find((i) => i !== undefined);
        const similar = items.similar.get(normalisedName(rest));
        const match: LineMatch | null = chosen
          ? exact('sku', chosen)
          : fromSource
            ? exact('supplierSku', fromSource)
            : named
              ? exact('name', named)
              : skuWord
                ? exact('sku', skuWord)
                : similar
                  ? {
                      kind: 'probable',
                      by: 'similarity',
                      item: { id: similar.id, name: similar.name, sku: similar.sku },
                      similarity: similar.similarity,
                    }
                  : null;
        // the supplier's part number: the one its sources know, else the catalogue number leading the name (unless it is our own SKU)
        const leading = partNumber && !bySku(partNumber) ? partNumber : null;
        return { supplierSku: source?.supplierSku ?? leading, match };
      });
    },
  };
}

/** An invoice read, with the existing supplier of its name (null when none) and each line's match, in line order. */
export type MatchedInvoice = { pdf: ReadInvoice; supplierId: string | null; lines: InvoiceLineMatch[] };

/** Reads an invoice PDF (as readInvoicePdf) and matches its lines, with the part numbers of the supplier it names when that supplier exists. */
export async function readMatchedInvoice(
  db: Db,
  file: UploadedFile | undefined,
  readBy: string,
): Promise<MatchedInvoice> {
  const pdf = await readInvoicePdf(file, { readBy });
  const supplier = pdf.extracted.supplierName
    ? await suppliersService(db).findByName(pdf.extracted.supplierName)
    : undefined;
  const supplierId = supplier?.id ?? null;
  return { pdf, supplierId, lines: await invoiceMatcher(db).matchLines(supplierId, pdf.extracted.items) };
}
