import { describe, expect, it } from 'vitest';
import { nextRunText } from '../../src/schedule/nextRunText.js';
import { localTime } from '../../src/timeText.js';

describe('schedule list: the next run', () => {
  it("is shown in the operator's time zone with its offset, and in the schedule's own zone when that differs", () => {
    const next = Date.parse('2026-11-24T01:00:00.000Z');
    expect(nextRunText(next, 'Europe/Amsterdam', 'UTC')).toBe(
      '2026-11-24 01:00:00 +00:00 (2026-11-24 02:00 Europe/Amsterdam)',
    );
    expect(nextRunText(next, 'Europe/Amsterdam', 'Europe/Amsterdam')).toBe('2026-11-24 02:00:00 +01:00');
    expect(nextRunText(next, undefined, 'America/New_York')).toBe('2026-11-23 20:00:00 -05:00');
    expect(nextRunText(undefined, 'UTC', 'UTC')).toBe('unknown');
  });

  it('a time keeps its offset across daylight saving time', () => {
    expect(localTime(Date.parse('2026-07-01T12:00:00Z'), 'Europe/Amsterdam')).toBe('2026-07-01 14:00:00 +02:00');
    expect(localTime(Date.parse('2026-01-01T12:00:00Z'), 'Europe/Amsterdam')).toBe('2026-01-01 13:00:00 +01:00');
    expect(localTime(Date.parse('2026-01-01T12:00:00Z'), 'Asia/Kolkata')).toBe('2026-01-01 17:30:00 +05:30');
  });
});
