import { localTime } from '../timeText.js';

/**
 * When a schedule fires next, as `schedule list` shows it: in the operator's time zone with its
 * offset, and in the schedule's own zone when that is another one (a person set "02:00
 * Europe/Amsterdam" and wants to see 02:00 whatever zone the operator reads in).
 */
export function nextRunText(next: number | undefined, tz: string | undefined, timeZone: string): string {
  if (next === undefined) return 'unknown';
  const here = localTime(next, timeZone);
  if (tz === undefined || tz === timeZone) return here;
  const there = new Intl.DateTimeFormat('sv-SE', {
    timeZone: tz,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  }).format(new Date(next));
  return `${here} (${there} ${tz})`;
}
