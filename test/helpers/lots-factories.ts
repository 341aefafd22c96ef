/** The UK calendar date (YYYY-MM-DD) `days` from today: lot expiries are dates on the stores' calendar (issue 42). */
export const day = (days: number): string =>
  new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/London' }).format(new Date(Date.now() + days * 86_400_000));

/** YYMMDD of a YYYY-MM-DD, as GS1's (17) carries it. */
export const yymmdd = (date: string): string => date.slice(2).replaceAll('-', '');
