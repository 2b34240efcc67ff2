import type { Command } from 'commander';
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

/** Sets the process exit code a command's action decided on. */
export type SetExitCode = (code: number) => void;

/**
 * Every command module exports `register(program, setExitCode)`. Keep this list the only
 * place commands are wired in; a module may import its heavy dependencies only inside its
 * action (see src/cli.ts).
 */
export function registerCommands(program: Command, setExitCode: SetExitCode): void {
  registerDemo(program, setExitCode);
  registerImport(program, setExitCode);
  registerWorker(program, setExitCode);
  registerStatus(program, setExitCode);
  registerSimulator(program, setExitCode);
  registerToken(program, setExitCode);
  registerLogin(program, setExitCode);
  registerValidate(program, setExitCode);
  registerDeadLetters(program, setExitCode);
  registerReview(program, setExitCode);
  registerWatch(program, setExitCode);
  registerSchedule(program, setExitCode);
  registerAccounts(program, setExitCode);
  registerDashboard(program, setExitCode);
}
