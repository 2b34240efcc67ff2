/**
 * The catalogue of error codes (src/errorCodes.ts) against the source and docs/errors.md:
 * every code the program can emit is in the table, every code in the table is emitted, the doc is
 * exactly what the table generates, and README and `--help` point to it. The compiler holds most
 * codes already (error classes, row errors and notes take only the table's codes, each error class
 * only the codes of its exit code); the source scan (codeScan.ts) finds the ones it cannot see.
 * Failures say what to change, so a merge of two branches that both added codes is easy to finish.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONFIG_VARIABLES } from '../../src/config.js';
import { TRANSPORT_ERRORS } from '../../src/delivery/classifyOutcome.js';
import { CODE_PATTERNS, ERROR_CODES } from '../../src/errorCodes.js';
import { FileRefusedError, InfrastructureError, UsageError } from '../../src/errors.js';
import { projectRoot } from '../../src/paths.js';
import { runCli } from '../helpers/runCli.js';
import { scanSource, type FoundCode } from './codeScan.js';
import { ERROR_DOCS_PATH, renderErrorDocs } from './errorDocs.js';

const CATALOGUE = 'src/errorCodes.ts';

/**
 * Capitals in the source that are not codes a person sees, each with why. Everything else the scan
 * finds must be in the catalogue. (Also not codes: the names of settings, CONFIG_VARIABLES, and the
 * raw codes classifyOutcome translates, TRANSPORT_ERRORS' keys; both are read from the source.)
 */
const NOT_CODES: Readonly<Record<string, string>> = {
  CSV_MAX_RECORD_SIZE: "csv-parse's code for an oversized record, translated to CSV_RECORD_TOO_LARGE",
  OTHER: "a metrics label's bucket for codes not worth a series of their own",
  // Node's TLS certificate codes a Redis handshake fails with (src/redis.ts tlsProblem): said as REDIS_TLS, in words.
  UNABLE_TO_GET_ISSUER_CERT: "Node's TLS code, said as REDIS_TLS",
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: "Node's TLS code, said as REDIS_TLS",
  CERT_UNTRUSTED: "Node's TLS code, said as REDIS_TLS",
  CERT_SIGNATURE_FAILURE: "Node's TLS code, said as REDIS_TLS",
  CERT_NOT_YET_VALID: "Node's TLS code, said as REDIS_TLS",
  ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED: "Node's TLS code, said as REDIS_TLS",
};

/** The simulator plays the remote API: its answers' codes are the API's, not ours (docs/errors.md says so). */
const REMOTE_API = 'src/simulator/';

async function sourceFiles(dir: string, ext: string): Promise<string[]> {
  const entries = await readdir(join(projectRoot, dir), { withFileTypes: true, recursive: true });
  return entries
    .filter((e) => e.isFile() && e.name.endsWith(ext))
    .map((e) => relative(projectRoot, join(e.parentPath, e.name)))
    .sort();
}

/** Every code-like literal of src/ and jobs/ (TypeScript read by the parser, Lua by a regex), the catalogue itself left out. */
async function scanProgram(): Promise<FoundCode[]> {
  const found: FoundCode[] = [];
  for (const file of [...(await sourceFiles('src', '.ts')), ...(await sourceFiles('jobs', '.ts'))]) {
    if (file === CATALOGUE) continue;
    const codes = scanSource(file, await readFile(join(projectRoot, file), 'utf8'));
    // An error the simulator throws (an option it refuses) is ours; the codes of its answers are the API's.
    found.push(...(file.startsWith(REMOTE_API) ? codes.filter((c) => c.via !== undefined) : codes));
  }
  for (const file of await sourceFiles('src/lua', '.lua')) {
    const text = await readFile(join(projectRoot, file), 'utf8');
    for (const match of text.matchAll(/'([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)'|"([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)"/g)) {
      const line = text.slice(0, match.index).split('\n').length;
      found.push({ code: match[1] ?? match[2]!, file, line, emitted: true });
    }
  }
  return found;
}

/** `HTTP_<status>` -> `HTTP_*`, the form the scan reports a template in. */
const patternKey = (pattern: string): string => pattern.replace(/<[^>]*>/g, '*');

/** What a found code is, beside a catalogue entry: a setting's name, a raw transport code, a known non-code. */
function notACode(code: string): boolean {
  return CONFIG_VARIABLES.includes(code) || Object.hasOwn(TRANSPORT_ERRORS, code) || Object.hasOwn(NOT_CODES, code);
}

/** What to add to the table for a code it lacks: a ready entry, guessed from where the code was found. */
function suggestedEntry(code: string, uses: readonly FoundCode[]): string {
  const via = uses.find((u) => u.via !== undefined)?.via;
  const exit: Record<string, number> = {
    'new UsageError': 2,
    'new FileRefusedError': 3,
    'new InfrastructureError': 5,
    'new JobDataError': 1,
  };
  const seen = via === 'new JobDataError' ? 'worker' : 'refusal';
  const keys = Object.keys(ERROR_CODES);
  const after = keys.filter((key) => key < code).pop();
  const where = after === undefined ? `first, before ${keys[0]}` : `after ${after}`;
  return [
    `  // ${where}; found at ${uses.map((u) => `${u.file}:${u.line}`).join(', ')}`,
    `  ${code}: {`,
    via === undefined
      ? `    seen: ['${seen}'], // where a person meets it, main place first: refusal, row, note, delivery, worker`
      : `    seen: ['${seen}'],`,
    ...(via !== undefined && exit[via] !== undefined ? [`    exit: ${exit[via]},`] : []),
    `    meaning: 'what it means, in one short line',`,
    `    action: 'what to do about it',`,
    `  },`,
  ].join('\n');
}

describe('the catalogue of error codes (src/errorCodes.ts)', () => {
  it('holds every code the program can emit', async () => {
    const unknown = new Map<string, FoundCode[]>();
    for (const found of await scanProgram()) {
      if (!found.emitted || Object.hasOwn(ERROR_CODES, found.code) || notACode(found.code)) continue;
      if (found.code.includes('*') && Object.keys(CODE_PATTERNS).map(patternKey).includes(found.code)) continue;
      unknown.set(found.code, [...(unknown.get(found.code) ?? []), found]);
    }
    const advice = [...unknown.entries()].map(([code, uses]) =>
      code.includes('*')
        ? `  // a pattern: add it to CODE_PATTERNS, its varying part written <name>; found at ${uses.map((u) => `${u.file}:${u.line}`).join(', ')}\n  '${code.replace(/\*/g, '<name>')}': { ... },`
        : suggestedEntry(code, uses),
    );
    expect(
      [...unknown.keys()],
      `${CATALOGUE} lacks codes the source emits. Add to ERROR_CODES, in alphabetical order:\n\n${advice.join('\n\n')}\n\n` +
        'then run `npm run docs:errors`. (Not a code a person sees? Name it in NOT_CODES of this test, with why.)\n',
    ).toEqual([]);
  });

  it('lists no code the program no longer emits', async () => {
    const used = new Set((await scanProgram()).map((found) => found.code));
    const unused = Object.keys(ERROR_CODES).filter((code) => !used.has(code));
    const unusedPatterns = Object.keys(CODE_PATTERNS).filter((pattern) => !used.has(patternKey(pattern)));
    expect(
      [...unused, ...unusedPatterns],
      `no file of src/ or jobs/ emits these any more: remove them from ${CATALOGUE}, then run \`npm run docs:errors\``,
    ).toEqual([]);
  });

  it('keeps its codes in alphabetical order, so parallel additions merge cleanly', () => {
    for (const table of [ERROR_CODES, CODE_PATTERNS]) {
      const keys = Object.keys(table);
      const misplaced = keys.filter((key, i) => i > 0 && keys[i - 1]! > key);
      expect(misplaced, `move these in ${CATALOGUE} to their alphabetical place`).toEqual([]);
    }
  });

  it('knows no code that names a setting, a raw transport code or a non-code', () => {
    expect(Object.keys(ERROR_CODES).filter(notACode)).toEqual([]);
  });

  it(`${ERROR_DOCS_PATH} is exactly what the table generates`, async () => {
    const written = await readFile(join(projectRoot, ERROR_DOCS_PATH), 'utf8');
    expect(
      written,
      `${ERROR_DOCS_PATH} is out of date: run \`npm run docs:errors\` (never edit or merge it by hand)`,
    ).toBe(renderErrorDocs());
  });

  it('README (exit codes) and the top-level --help point to it', async () => {
    const readme = await readFile(join(projectRoot, 'README.md'), 'utf8');
    const exitCodes = /## Exit codes\n([\s\S]*?)\n## /.exec(readme)?.[1] ?? '';
    expect(exitCodes).toContain(`(${ERROR_DOCS_PATH})`);
    const help = await runCli(['--help']);
    expect(help.stdout).toContain(ERROR_DOCS_PATH);
  });

  it('each error class takes only the codes of its exit code, and reads its exit code from the table', () => {
    // @ts-expect-error: not a code of the catalogue
    expect(new UsageError('NO_SUCH_CODE', 'x').exitCode).toBe(2);
    // @ts-expect-error: CONFIG_INVALID is exit 2, not 3
    expect(new FileRefusedError('CONFIG_INVALID', 'f', 'x').exitCode).toBe(3);
    expect(new InfrastructureError('LEDGER_LOST', 'x').exitCode).toBe(ERROR_CODES.LEDGER_LOST.exit);
  });
});

describe('the source scan (codeScan.ts)', () => {
  it('finds a code in every form a file can emit one, and leaves other capitals alone', () => {
    const text = [
      "throw new UsageError('FLAG_WRONG', 'x');",
      "throw new bulk.FileRefusedError('FILE_WRONG', file, 'x');",
      "return { code: 'WORDCODE', message: 'x' };",
      "const code = status === undefined ? 'NO_STATUS' : `HTTP_${status}`;",
      "class E extends Error { readonly code = 'ABORTED_HERE'; }",
      "const SOME_CONSTANT = 'LOOSE_CODE';",
      "throw new Error('GET');",
      "throw new ConfigError('BULKORDER_X', 'is wrong');",
      "if (method === 'POST') send();",
      '',
    ].join('\n');
    const found = scanSource('src/x.ts', text);
    expect(found.filter((f) => f.emitted).map((f) => [f.code, f.line, f.via])).toEqual([
      ['FLAG_WRONG', 1, 'new UsageError'],
      ['FILE_WRONG', 2, 'new FileRefusedError'],
      ['WORDCODE', 3, undefined],
      ['NO_STATUS', 4, undefined],
      ['HTTP_*', 4, undefined],
      ['ABORTED_HERE', 5, undefined],
      ['LOOSE_CODE', 6, undefined],
      ['BULKORDER_X', 8, undefined], // a setting's name: the test knows it from CONFIG_VARIABLES
    ]);
    // Words elsewhere are only uses: a catalogue code passed as an argument (rowNote(..., 'TRIMMED', ...)) counts as emitted by the table check.
    expect(found.filter((f) => !f.emitted).map((f) => f.code)).toEqual(['GET', 'POST']);
  });

  it('the catalogue check names an unknown code with a ready entry and where it goes', () => {
    const uses = scanSource('src/y.ts', "throw new FileRefusedError('FILE_ODD', file, 'x');\n");
    expect(suggestedEntry('FILE_ODD', uses)).toBe(
      [
        '  // after FILE_NOT_TEXT; found at src/y.ts:1',
        '  FILE_ODD: {',
        "    seen: ['refusal'],",
        '    exit: 3,',
        "    meaning: 'what it means, in one short line',",
        "    action: 'what to do about it',",
        '  },',
      ].join('\n'),
    );
  });
});
