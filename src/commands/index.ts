import type { Command } from 'commander';
import type { SetExitCode } from './options.js';
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
import { register as registerWatch } from './watch.js';
import { register as registerSchedule } from './schedule.js';
import { register as registerAccounts } from './accounts.js';
import { register as registerDashboard } from './dashboard.js';
import { register as registerConfig } from './config.js';

export type { SetExitCode };

/**
 * Every command module exports `register(parent, setExitCode[, kind])`. Keep this list the only
 * place commands are wired in (the one module that imports command modules); a module may import
 * its heavy dependencies only inside its action (see src/cli.ts). Both record kinds get the same
 * `status`, `resume`, `dead-letters` and `review` builders: orders at the top level, employee
 * accounts under `bulkorder accounts`.
 */
export function registerCommands(program: Command, setExitCode: SetExitCode): void {
  registerDemo(program, setExitCode);
  registerImport(program, setExitCode);
  registerWorker(program, setExitCode);
  registerStatus(program, setExitCode, 'orders');
  registerSimulator(program, setExitCode);
  registerToken(program, setExitCode);
  registerLogin(program, setExitCode);
  registerValidate(program, setExitCode);
  registerDeadLetters(program, setExitCode, 'orders');
  registerReview(program, setExitCode, 'orders');
  registerWatch(program, setExitCode);
  registerSchedule(program, setExitCode);
  const accounts = registerAccounts(program, setExitCode);
  registerStatus(accounts, setExitCode, 'accounts');
  registerDeadLetters(accounts, setExitCode, 'accounts');
  registerReview(accounts, setExitCode, 'accounts');
  registerDashboard(program, setExitCode);
  registerConfig(program, setExitCode);
}
