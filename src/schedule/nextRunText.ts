/**
 * When a schedule fires next, as `schedule list` shows it: UTC, and the schedule's own time zone
 * when it has one (a person set "02:00 Europe/Amsterdam" and wants to see 02:00, not 01:00Z).
 */
export function nextRunText(next: number | undefined, tz: string | undefined): string {
  if (next === undefined) return 'unknown';
  const utc = new Date(next).toISOString();
  if (tz === undefined || tz === 'UTC') return utc;
  const local = new Intl.DateTimeFormat('sv-SE', {
    timeZone: tz,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  }).format(new Date(next));
  return `${utc} (${local} ${tz})`;
}
