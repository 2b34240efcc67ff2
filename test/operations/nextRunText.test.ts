import { describe, expect, it } from 'vitest';
import { nextRunText } from '../../src/schedule/nextRunText.js';

describe('schedule list: the next run', () => {
  it("shows the schedule's own time zone beside UTC", () => {
    const next = Date.parse('2026-11-24T01:00:00.000Z');
    expect(nextRunText(next, 'Europe/Amsterdam')).toBe('2026-11-24T01:00:00.000Z (2026-11-24 02:00 Europe/Amsterdam)');
    expect(nextRunText(next, undefined)).toBe('2026-11-24T01:00:00.000Z');
    expect(nextRunText(undefined, 'UTC')).toBe('unknown');
  });
});
