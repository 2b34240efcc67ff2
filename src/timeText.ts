/**
 * Times as a person reads them: in the operator's time zone (BULKORDER_TIMEZONE, default the
 * system's), always with the UTC offset, so `2026-11-22 03:00:00 +01:00` is never mistaken for UTC.
 * JSON output keeps ISO 8601 UTC; this is for text and pages only.
 */
const formats = new Map<string, Intl.DateTimeFormat>();

function formatIn(timeZone: string): Intl.DateTimeFormat {
  let format = formats.get(timeZone);
  if (format === undefined) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
      timeZoneName: 'longOffset',
    });
    formats.set(timeZone, format);
  }
  return format;
}

/** `2026-11-22 03:00:00 +01:00`: the moment `at` (ms) in `timeZone`, with its offset. */
export function localTime(at: number, timeZone: string): string {
  const parts: Partial<Record<Intl.DateTimeFormatPartTypes, string>> = {};
  for (const part of formatIn(timeZone).formatToParts(new Date(at))) parts[part.type] = part.value;
  // ICU writes the offset as `GMT+01:00`, and UTC itself as `GMT` or `GMT+00:00`.
  const offset = (parts.timeZoneName ?? 'GMT').replace(/^GMT$/, 'GMT+00:00').replace(/^GMT/, '');
  return `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute}:${parts.second} ${offset}`;
}

/** localTime, or `unknown` for a missing time. */
export function localTimeOr(at: number | undefined, timeZone: string, missing = 'unknown'): string {
  return at === undefined || !Number.isFinite(at) || at <= 0 ? missing : localTime(at, timeZone);
}
