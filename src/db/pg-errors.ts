/** PostgreSQL's error codes a service turns into its own answer (the error middleware maps the rest). */
const pgErrorCode = (err: unknown) => (err as { code?: string }).code;

export const isUniqueViolation = (err: unknown) => pgErrorCode(err) === '23505';
export const isForeignKeyViolation = (err: unknown) => pgErrorCode(err) === '23503';
