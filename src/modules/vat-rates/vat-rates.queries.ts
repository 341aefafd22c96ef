import { sql } from '../../db/sql';

/** The owner's fragment for other modules' statements: the default VAT rate as a scalar subquery (NULL when none is default). */
export const defaultVatRateSql = sql`(SELECT rate FROM vat_rates WHERE is_default)`;
