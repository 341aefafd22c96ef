import { readFileSync } from 'node:fs';

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

/** The package.json version, reported by /api/health and /api/docs. */
export const APP_VERSION: string = pkg.version;
