import { describe, expect, it } from 'vitest';
import { runCli } from '../ingest/ingestHelpers.js';

describe('bulkorder token', () => {
  it('checks by default: no "required option --check"', { timeout: 90_000 }, async () => {
    const { stderr, stdout } = await runCli(['token', '--config-file', '/nonexistent/nope.env']);
    expect(stderr + stdout).not.toContain("required option '--check'");
    expect(stderr).toContain('/nonexistent/nope.env'); // it went on to read the configuration, and names the missing file
  });
});
