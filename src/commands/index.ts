import type { Command } from 'commander';
import type { CommandIo } from './options.js';
import { register as registerImport } from './import.js';
import { register as registerWorker } from './worker.js';
import { register as registerStatus } from './status.js';
import { register as registerDemo } from './demo.js';
import { register as registerSimulator } from './simulator.js';
import { register as registerToken } from './token.js';
import { register as registerLogin } from './login.js';
import { register as registerValidate } from './validate.js';
import { register as registerDeadLetters } from './deadLetters.js';
import { register as registerReview } from './review.js';
import { register as registerOpen } from './open.js';
import { register as registerWatch } from './watch.js';
import { register as registerSchedule } from './schedule.js';
import { register as registerAccounts } from './accounts.js';
import { register as registerDashboard } from './dashboard.js';
import { register as registerConfig } from './config.js';
import { register as registerBatch } from './batch.js';

export type { CommandIo };

/**
 * Every command module exports `register(parent, io[, kind])`. Keep this list the only
 * place commands are wired in (the one module that imports command modules); a module may import
 * its heavy dependencies only inside its action (see src/cli.ts). Both record kinds get the same
 * `import`, `status`, `resume`, `dead-letters` and `review` builders: orders at the top level, employee
 * accounts under `bulkorder accounts`.
 */
export function registerCommands(program: Command, io: CommandIo): void {
  registerDemo(program, io);
  registerImport(program, io, 'orders');
  registerWorker(program, io);
  registerStatus(program, io, 'orders');
  registerBatch(program, io, 'orders');
  registerSimulator(program, io);
  registerToken(program, io);
  registerLogin(program, io);
  registerValidate(program, io);
  registerDeadLetters(program, io, 'orders');
  registerReview(program, io, 'orders');
  registerOpen(program, io, 'orders');
  registerWatch(program, io);
  registerSchedule(program, io);
  const accounts = registerAccounts(program, io);
  registerImport(accounts, io, 'accounts');
  registerStatus(accounts, io, 'accounts');
  registerBatch(accounts, io, 'accounts');
  registerDeadLetters(accounts, io, 'accounts');
  registerReview(accounts, io, 'accounts');
  registerOpen(accounts, io, 'accounts');
  registerDashboard(program, io);
  registerConfig(program, io);
}
