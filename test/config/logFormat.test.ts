import { describe, expect, it } from 'vitest';
import { prettyLogs } from '../../src/logger.js';
import { loadConfig } from '../../src/config.js';

describe('log format', () => {
  it('readable lines on a terminal, JSON when piped, either when asked', () => {
    expect(prettyLogs('auto', true)).toBe(true);
    expect(prettyLogs('auto', false)).toBe(false);
    expect(prettyLogs(undefined, true)).toBe(true);
    expect(prettyLogs('json', true)).toBe(false);
    expect(prettyLogs('pretty', false)).toBe(true);
  });

  it('LOG_FORMAT is read by config (default auto) and refused when unknown', () => {
    expect(loadConfig({ env: {} }).logFormat).toBe('auto');
    expect(loadConfig({ env: { LOG_FORMAT: 'json' } }).logFormat).toBe('json');
    expect(() => loadConfig({ env: { LOG_FORMAT: 'xml' } })).toThrow(/LOG_FORMAT/);
  });

  it('a missing --config-file is a configuration error (exit 2) naming the file and the flag', () => {
    let error: unknown;
    try {
      loadConfig({ env: {}, envFile: '/nonexistent/nope.env', envFileFlag: '--config-file' });
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject({ exitCode: 2 });
    expect(String((error as Error).message)).toMatch(
      /--config-file.*\/nonexistent\/nope\.env: no such file|\/nonexistent\/nope\.env: no such file/,
    );
  });
});
