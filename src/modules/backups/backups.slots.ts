export type Frequency = 'hourly' | 'daily' | 'weekly';

/**
 * When scheduled backups fall due, in the server's local time zone (node's TZ): hourly at the
 * time's minute past every hour (its hour is ignored), daily at the time, weekly on Sundays at
 * the time. A local time that a DST change skips runs at the same moment an hour later by the
 * clock (JavaScript's Date moves it past the gap); one that happens twice runs at the first.
 */
export type SlotRule = { frequency: Frequency; time: string };

export const PERIOD_MS: Record<Frequency, number> = { hourly: 3_600_000, daily: 86_400_000, weekly: 7 * 86_400_000 };

const MINUTE_MS = 60_000;

function hoursAndMinutes(time: string): [number, number] {
  const [hours, minutes] = time.split(':').map(Number);
  return [hours, minutes];
}

/** The local day `days` after date's, at the time (an hourly rule never gets here). */
function atTimeOn(date: Date, days: number, time: string): Date {
  const [hours, minutes] = hoursAndMinutes(time);
  return new Date(date.getFullYear(), date.getMonth(), date.getDate() + days, hours, minutes);
}

/** The latest slot at or before now. */
export function latestSlot(rule: SlotRule, now: Date): Date {
  if (rule.frequency === 'hourly') {
    // Counted back in real minutes, so the hour a DST change repeats has its slot too.
    const [, minutes] = hoursAndMinutes(rule.time);
    const minuteStart = Math.floor(now.getTime() / MINUTE_MS) * MINUTE_MS;
    return new Date(minuteStart - ((now.getMinutes() - minutes + 60) % 60) * MINUTE_MS);
  }
  const backToSunday = rule.frequency === 'weekly' ? -now.getDay() : 0;
  const slot = atTimeOn(now, backToSunday, rule.time);
  return slot <= now ? slot : atTimeOn(now, backToSunday - (rule.frequency === 'weekly' ? 7 : 1), rule.time);
}

/** The first slot after now. */
export function slotAfter(rule: SlotRule, now: Date): Date {
  const latest = latestSlot(rule, now);
  if (rule.frequency === 'hourly') return new Date(latest.getTime() + PERIOD_MS.hourly);
  return atTimeOn(latest, rule.frequency === 'weekly' ? 7 : 1, rule.time);
}
