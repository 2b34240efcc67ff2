import { join } from 'node:path';
import { Queue } from 'bullmq';
import { afterEach, describe, expect, it } from 'vitest';
import { describeSchedule } from '../../src/commands/scheduleRun.js';
import { startDashboard } from '../../src/dashboard/startDashboard.js';
import { SCHEDULES_QUEUE } from '../../src/queues.js';
import { ScheduleStore } from '../../src/schedule/scheduleStore.js';
import type { ScheduledImportData } from '../../src/schedule/scheduledImportJob.js';
import { deliveryRig } from '../helpers/deliveryRig.js';
import { waitFor } from '../helpers/cliProcess.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('a schedule whose source names no file', () => {
  it('is "no file" in schedule list and on the dashboard, not "1 file, 1 refused" or "completed"', async () => {
    const rig = await deliveryRig('schedule-no-file');
    cleanups.push(() => rig.close());
    await rig.startWorker(); // runs the scheduled imports too
    const queue = new Queue<ScheduledImportData>(SCHEDULES_QUEUE, {
      connection: rig.services.redis,
      prefix: rig.prefix,
    });
    cleanups.push(() => queue.close());
    const store = new ScheduleStore(queue);
    await store.set({ name: 'nightly', cron: '* * * * * *', source: join(rig.dir, 'orders-*.csv') });
    cleanups.push(() => store.remove('nightly'));
    await waitFor(async () => (await store.list())[0]?.lastRun !== undefined, 'a firing');
    const [info] = await store.list();

    const text = describeSchedule(info!, 'Europe/Amsterdam');
    expect(text).toMatch(
      /last run \d{4}-\d\d-\d\d \d\d:\d\d:\d\d \+0[12]:00: no file \(the source named none; nothing imported\)/,
    );
    expect(text).not.toContain('refused');

    const dashboard = await startDashboard(rig.config, rig.logger, { port: 0 });
    cleanups.push(() => dashboard.close());
    const html = await (await fetch(`${dashboard.url}/schedules`)).text();
    expect(html).toContain('no file</span> (the source named none; nothing imported)');
    expect(html).not.toMatch(/: completed/);
  });
});
