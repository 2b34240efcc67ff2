import { createWriteStream } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HEADER, orderRow } from '../helpers/deliveryRig.js';
import { startCli } from '../helpers/cliProcess.js';
import { runCli } from '../helpers/runCli.js';
import { recordReliability } from '../helpers/reliabilityLog.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'bulkorder-files-'));
});
afterAll(async () => rm(dir, { recursive: true, force: true }));

/** Streams `size` bytes of `fill` into a file (never holds it in memory). */
async function writeBig(path: string, head: string, size: number, fill: string, tail: string): Promise<void> {
  const out = createWriteStream(path);
  out.write(head);
  const block = fill.repeat(Math.ceil((1024 * 1024) / fill.length));
  for (let written = 0; written < size; written += block.length) if (!out.write(block)) await once(out, 'drain');
  out.end(tail);
  await once(out, 'finish');
}

/** `validate` with a 128 MB heap: a reader that buffered the input would die of it. */
function validateSmallHeap(file: string, ...flags: string[]) {
  return startCli(['validate', file, ...flags], { NODE_OPTIONS: '--max-old-space-size=128' });
}

describe('hostile files, validated with a 128 MB heap', () => {
  it('a 300 MB single field is refused (exit 3) without holding it', async () => {
    const file = join(dir, 'bigfield.csv');
    await writeBig(file, `${HEADER}\nREF-1,1001,"`, 300 * 1024 * 1024, 'x', '",Anna\n');
    const run = validateSmallHeap(file);
    expect(await run.exited).toBe(3);
    expect(run.output()).toMatch(/bigfield\.csv: a record after line 1 is longer than 65536 characters/);
    recordReliability({
      fault: 'a 300 MB single field (validate, 128 MB heap)',
      behaviour: 'file refused, exit 3, naming the line: the cap stops reading at 64 KiB',
      orders: 1,
      lost: 0,
      duplicates: 0,
      held: 0,
    });
  }, 120_000);

  it('an enormous JSON array is streamed: 200,000 orders validate in a small heap', async () => {
    const file = join(dir, 'huge.json');
    const one = (i: number) =>
      JSON.stringify({
        orderRef: `HUGE-${i}`,
        businessCustomerId: 1001,
        recipient: {
          address: {
            firstName: 'Anna',
            lastName: 'de Vries',
            street: 'Keizersgracht',
            streetNumber: 12,
            postalCode: '1015 CX',
            city: 'Amsterdam',
            countryCode: 'NL',
          },
          languageCode: 'nl',
          email: `anna.${i}@example.nl`,
          telephoneNumber: '+31612345678',
        },
        products: [{ productId: 5001, quantity: 1 }],
      });
    const out = createWriteStream(file);
    out.write('[\n');
    for (let i = 1; i <= 200_000; i++) if (!out.write(`${i > 1 ? ',\n' : ''}${one(i)}`)) await once(out, 'drain');
    out.end('\n]\n');
    await once(out, 'finish');
    const run = validateSmallHeap(file);
    expect(await run.exited).toBe(0);
    expect(run.output()).toMatch(/200000|200,000/);
    recordReliability({
      fault: 'an enormous JSON array: 200,000 orders (validate, 128 MB heap)',
      behaviour: 'streamed element by element; all valid',
      orders: 200_000,
      lost: 0,
      duplicates: 0,
      held: 0,
    });
  }, 180_000);

  it('a file with no newline at all: the header alone is an empty file (refused, or accepted with --allow-empty), a header and a row without a final newline is read', async () => {
    const headerOnly = join(dir, 'header-only.csv');
    await writeFile(headerOnly, HEADER);
    // Small files: in-process (the heap bound is the big files' point, above).
    const refused = await runCli(['validate', headerOnly]);
    expect(refused.code).toBe(3);
    expect(refused.output).toMatch(/header-only\.csv: the file has no orders/);
    const empty = await runCli(['validate', headerOnly, '--allow-empty']);
    expect(empty.code).toBe(0);
    expect(empty.output).toMatch(/orders\s+0/);

    const noFinalNewline = join(dir, 'no-final-newline.csv');
    await writeFile(noFinalNewline, `${HEADER}\r\n${orderRow('NONL-1')}`);
    const one = await runCli(['validate', noFinalNewline]);
    expect(one.code).toBe(0);
    expect(one.output).toMatch(/valid\s+1/);
  }, 60_000);
});
