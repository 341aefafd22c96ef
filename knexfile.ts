// The one knex configuration: the server, the scripts and the tests all build their
// connection from DATABASE_URL through src/db/knex.ts; this file exists for tools
// that expect a knexfile.
import { createDb } from './src/db/knex';

export default createDb;
