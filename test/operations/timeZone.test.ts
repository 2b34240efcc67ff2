/**
 * Issue 33: times in the dashboard, `status` and schedules are shown in the operator's time zone
 * (BULKORDER_TIMEZONE, default the system's) with the UTC offset, never as bare UTC. JSON keeps UTC.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { startDashboard } from '../../src/dashboard/startDashboard.js';
import { localTime } from '../../src/timeText.js';
import { deliveryRig, HEADER, orderRow, type DeliveryRig } from '../helpers/deliveryRig.js';
import { runCli } from '../helpers/runCli.js';

let rig: DeliveryRig | undefined;
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await rig?.close();
  rig = undefined;
});

describe("times in the operator's time zone, with the offset", () => {
  it('status, the dashboard and schedule list show BULKORDER_TIMEZONE', async () => {
    // India: +05:30 all year, so the offset is unmistakable and never a DST guess.
    rig = await deliveryRig('tz', {}, { BULKORDER_TIMEZONE: 'Asia/Kolkata' });
    const { batchId } = await rig.importFile(
      await rig.writeFile('tz.csv', [HEADER, orderRow('TZ-1')].join('\n') + '\n'),
    );
    const batch = (await rig.services.batches.get(batchId))!;
    const started = localTime(batch.startedAt, 'Asia/Kolkata');
    expect(started).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \+05:30$/);

    const status = await runCli(['status'], rig.env);
    expect(status.stdout).toContain(`${batchId}  ${batch.file}  ${started}`);
    const json = JSON.parse((await runCli(['status', '--json'], rig.env)).stdout) as {
      batches: { startedAt: number }[];
    };
    expect(json.batches[0]!.startedAt).toBe(batch.startedAt); // machines keep the instant

    expect(
      (
        await runCli(
          ['schedule', 'set', 'nightly', '--cron', '0 2 * * *', '--tz', 'Europe/Amsterdam', '--source', rig.dir],
          rig.env,
        )
      ).code,
    ).toBe(0);
    const listed = await runCli(['schedule', 'list'], rig.env);
    expect(listed.stdout).toMatch(
      /next run \d{4}-\d\d-\d\d \d\d:\d\d:00 \+05:30 \(\d{4}-\d\d-\d\d 02:00 Europe\/Amsterdam\)/,
    );

    const dashboard = await startDashboard(rig.config, rig.logger, { port: 0 });
    cleanups.push(() => dashboard.close());
    cleanups.push(() => runCli(['schedule', 'remove', 'nightly'], rig!.env));
    expect(await (await fetch(`${dashboard.url}/batches/${batchId}`)).text()).toContain(started);
    expect(await (await fetch(`${dashboard.url}/schedules`)).text()).toMatch(/\d\d:\d\d:00 \+05:30/);
  });

  it('a zone that is not one, or an output setting it does not know, is refused at start naming the variable (exit 2)', () => {
    expect(() => loadConfig({ env: { BULKORDER_TIMEZONE: 'Mars/Olympus' } })).toThrow(
      /BULKORDER_TIMEZONE: must be an IANA time zone/,
    );
    expect(() => loadConfig({ env: { BULKORDER_OUTPUT_DELIMITER: ':' } })).toThrow(/BULKORDER_OUTPUT_DELIMITER/);
    expect(() => loadConfig({ env: { BULKORDER_OUTPUT_ENCODING: 'utf-16' } })).toThrow(/BULKORDER_OUTPUT_ENCODING/);
    const config = loadConfig({ env: { BULKORDER_DATA_DIR: '/srv/bulkorder', BULKORDER_OUTPUT_BOM: 'no' } });
    expect(config.files).toEqual({
      dataDir: '/srv/bulkorder',
      resultsDir: '/srv/bulkorder/results',
      csv: { bom: false },
    });
    expect(loadConfig({ env: {} }).timeZone).toBe(Intl.DateTimeFormat().resolvedOptions().timeZone);
  });

  it("the system's zone is asked of ICU when first read, not by loading the configuration (its zone data cost a command's start 12-50 ms)", () => {
    const real = Intl.DateTimeFormat;
    let made = 0;
    const counting = function (...args: ConstructorParameters<typeof Intl.DateTimeFormat>) {
      made++;
      return new real(...args);
    };
    Intl.DateTimeFormat = counting as typeof Intl.DateTimeFormat;
    try {
      const config = loadConfig({ env: {} });
      expect(made).toBe(0);
      expect(Object.isFrozen(config)).toBe(true);
      expect(config.timeZone).toBe(real().resolvedOptions().timeZone);
      expect(config.timeZone).toBe(real().resolvedOptions().timeZone);
      expect(made).toBe(1); // once, then kept
      expect(loadConfig({ env: { BULKORDER_TIMEZONE: 'Asia/Kolkata' } }).timeZone).toBe('Asia/Kolkata');
    } finally {
      Intl.DateTimeFormat = real;
    }
  });
});
