import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import { pinoPretty } from './cjsPackages.js';

export type { Logger } from 'pino';

/**
 * Paths pino blanks out wherever they appear in a log object. Redaction only matches
 * paths, so secrets must also never be interpolated into message strings.
 */
const REDACT_PATHS = [
  'secret',
  'clientSecret',
  'client_secret',
  'token',
  'accessToken',
  'access_token',
  'authorization',
  'password',
  '*.secret',
  '*.clientSecret',
  '*.client_secret',
  '*.token',
  '*.accessToken',
  '*.access_token',
  '*.authorization',
  '*.password',
  'headers.authorization',
  '*.headers.authorization',
  'req.headers.authorization',
  // ioredis keeps the command on a reply error: an AUTH's arguments are the Redis user and password.
  'command.args',
  '*.command.args',
  '*.*.command.args',
];

export interface LoggerSettings {
  /** pino level; default `info`, or LOG_LEVEL as read by src/config.ts. */
  level?: string;
  /** Where lines go; default stderr, so stdout stays free for command output. */
  destination?: DestinationStream;
  /** Bound to every line. */
  base?: Record<string, unknown>;
  /** `pretty`: readable lines; `json`: one JSON object a line; `auto` (default): pretty when stderr is a terminal. */
  format?: 'auto' | 'json' | 'pretty';
}

/** Whether lines are written for a person: asked for, or `auto` on a terminal. */
export function prettyLogs(format: LoggerSettings['format'], isTTY = process.stderr.isTTY === true): boolean {
  return format === 'pretty' || ((format ?? 'auto') === 'auto' && isTTY);
}

/** Creates a root logger. Callers make one and pass it down; there is no module-level logger. */
export function createLogger(settings: LoggerSettings = {}): Logger {
  const options: LoggerOptions = {
    level: settings.level ?? 'info',
    base: settings.base ?? { pid: process.pid },
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  if (settings.destination === undefined && prettyLogs(settings.format)) {
    const { PinoPretty } = pinoPretty();
    // Synchronous, in this thread: lines and a progress bar on the same terminal stay in order.
    const pretty = PinoPretty({
      destination: 2,
      sync: true,
      colorize: process.stderr.isTTY === true,
      translateTime: 'SYS:HH:MM:ss',
      ignore: 'pid,hostname',
    });
    return pino(options, pretty);
  }
  return pino(options, settings.destination ?? pino.destination({ fd: 2, sync: false }));
}

/** A logger that writes nothing, for library callers that pass none. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
