import { afterEach, describe, expect, it } from 'vitest';
import { deliveryRig, HEADER, orderRow, type DeliveryRig } from '../helpers/deliveryRig.js';
import { recordReliability } from '../helpers/reliabilityLog.js';

let rig: DeliveryRig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

describe('a NUL byte anywhere refuses the whole file (issue 26, item 11)', () => {
  it('a NUL after row 1,334 of 2,000: exit 3 naming its line, no batch, nothing queued', async () => {
    rig = await deliveryRig('nul-byte');
    const rows = Array.from({ length: 2000 }, (_, i) => orderRow(`NUL-${i + 1}`));
    rows[1334] = rows[1334]!.replace('Keizersgracht', 'Keizers\u0000gracht'); // data row 1,335, file line 1,336
    const file = await rig.writeFile('damaged.csv', [HEADER, ...rows].join('\n') + '\n');
    const refused = await rig.importFile(file).then(
      () => undefined,
      (error: unknown) => error as { code: string; exitCode: number; message: string },
    );
    expect(refused).toMatchObject({ code: 'FILE_NOT_TEXT', exitCode: 3 });
    expect(refused!.message).toContain('line 1336 holds a NUL byte');
    expect(await rig.services.batches.list(10)).toEqual([]);
    expect(await rig.services.queue.count()).toBe(0);
    recordReliability({
      fault: 'a NUL byte after row 1,334 of a 2,000-order file',
      behaviour:
        'the whole file refused before anything was queued, exit 3 naming the line (it used to reject that row and queue the 1,334 before it)',
      orders: 0,
      lost: 0,
      duplicates: 0,
      held: 0,
    });
  });
});
