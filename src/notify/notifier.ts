import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Transporter } from 'nodemailer';
import { Agent, request } from 'undici';
import { nodemailer } from '../cjsPackages.js';
import type { NotifySettings } from '../config.js';
import { addressProblem, hostProblem, type PrivateAllowance } from '../config/privateAddress.js';
import type { Logger } from '../logger.js';
import type { NotifyEvent } from './notifyEvent.js';
import { maskWebhookUrl, webhookPayload, webhookTarget } from './webhookPayload.js';

/** Sends notifications to every configured webhook and, when set, by e-mail. */
export interface Notifier {
  /** True when anything is configured; callers skip building events otherwise. */
  readonly enabled: boolean;
  /** Delivers one event everywhere; never throws (a failed notification is logged, not fatal). */
  notify(event: NotifyEvent): Promise<void>;
  close(): void;
}

/** Attempts per webhook: a notification is not an order, so resending a POST is harmless. */
const ATTEMPTS = 3;
const FIRST_DELAY_MS = 500;

/** Counts notifications that failed for good, by destination (a metric; the masked URL or `email`). */
export type NotificationFailureSink = (destination: string) => void;

/**
 * Builds the notifier from the configuration. Each webhook gets the payload its URL asks for
 * (webhookPayload.ts). Webhook URLs are secrets (Slack and Teams put a token in the path): logs
 * name a webhook by its position and its masked URL only.
 */
export function createNotifier(
  settings: NotifySettings,
  logger: Logger,
  options: {
    onFailure?: NotificationFailureSink;
    /** How host names are resolved (default `dns.lookup`, as every connection does); every answer is checked. */
    lookup?: typeof dnsLookup;
  } = {},
): Notifier {
  // Every webhook connection resolves through the check: an address is judged at connect time, the one the socket
  // then uses, so a name that resolved to a public address at load and to 127.0.0.1 now (DNS rebinding) is refused.
  const dispatcher = new Agent({
    connect: { lookup: guardedLookup(settings.allowPrivate, options.lookup ?? dnsLookup) },
  });
  const mail = mailTransport(settings);
  const smtp = settings.smtp;
  const hooks = settings.urls.map((secret, i) => {
    const target = webhookTarget(secret.reveal());
    return { ...target, position: i + 1, masked: maskWebhookUrl(target.url) };
  });
  const sending: Sending = {
    settings,
    logger,
    dispatcher,
    ...(options.onFailure ? { onFailure: options.onFailure } : {}),
  };
  return {
    enabled: settings.urls.length > 0 || mail !== undefined,
    async notify(event) {
      const sends = hooks.map((hook) => sendToWebhook(hook, event, sending));
      if (mail !== undefined && smtp !== undefined) sends.push(sendByMail(mail, smtp, event, sending));
      await Promise.all(sends);
    },
    close() {
      mail?.close();
      void dispatcher.close().catch(() => undefined);
    },
  };
}

/** The e-mail transport when SMTP is configured. */
function mailTransport(settings: NotifySettings): Transporter | undefined {
  if (settings.smtp === undefined) return undefined;
  const { createTransport } = nodemailer();
  return createTransport({
    host: settings.smtp.host,
    port: settings.smtp.port,
    secure: settings.smtp.secure,
    ...(settings.smtp.user === undefined
      ? {}
      : { auth: { user: settings.smtp.user, pass: settings.smtp.password?.reveal() ?? '' } }),
    connectionTimeout: settings.timeoutMs,
    greetingTimeout: settings.timeoutMs,
    socketTimeout: settings.timeoutMs,
  });
}

/** What every send of one notifier shares: its settings, where it logs and counts failures, its connections. */
interface Sending {
  settings: NotifySettings;
  logger: Logger;
  /** Counts a notification that failed for good. */
  onFailure?: NotificationFailureSink;
  /** Webhook connections, whose addresses are checked as they connect. */
  dispatcher: Agent;
}

/** One configured webhook: its URL, payload format, position in the list and masked URL (what logs show). */
type Webhook = ReturnType<typeof webhookTarget> & { position: number; masked: string };

/** Posts one event to one webhook (with retries) and logs how it went; never rejects. */
async function sendToWebhook(hook: Webhook, event: NotifyEvent, sending: Sending): Promise<void> {
  const { settings, logger } = sending;
  return postWithRetries(hook.url, JSON.stringify(webhookPayload(hook.format, event)), {
    timeoutMs: settings.timeoutMs,
    allowPrivate: settings.allowPrivate,
    dispatcher: sending.dispatcher,
  }).then(
    () =>
      logger.info({ event: event.event, id: event.id, webhook: hook.position, url: hook.masked }, 'notification sent'),
    (error: unknown) => {
      sending.onFailure?.(hook.masked);
      logger.warn(
        {
          event: event.event,
          id: event.id,
          webhook: hook.position,
          url: hook.masked,
          format: hook.format,
          reason: (error as Error).message,
        },
        (error as Error).message.startsWith(ADDRESS_REFUSED)
          ? `notification to webhook ${hook.position} (${hook.masked}) not sent: ${(error as Error).message}`
          : `notification to webhook ${hook.position} (${hook.masked}) failed after ${ATTEMPTS} attempts`,
      );
    },
  );
}

/** E-mails one event to the configured recipients and logs how it went; never rejects. */
async function sendByMail(
  mail: Transporter,
  smtp: NonNullable<NotifySettings['smtp']>,
  event: NotifyEvent,
  sending: Sending,
): Promise<void> {
  const { logger } = sending;
  return mail
    .sendMail({
      from: smtp.from,
      to: [...smtp.to],
      subject: `[bulkorder ${event.env}] ${event.text.split('\n')[0]}`,
      text: mailText(event),
    })
    .then(
      () => logger.info({ event: event.event }, 'notification e-mailed'),
      (error: unknown) => {
        sending.onFailure?.('email');
        logger.warn(
          { event: event.event, id: event.id, reason: (error as Error).message },
          'notification e-mail failed',
        );
      },
    );
}

/** The code of a webhook send refused for its address (src/config/privateAddress.ts). */
const ADDRESS_REFUSED = 'WEBHOOK_ADDRESS_REFUSED';

/**
 * `dns.lookup` that refuses a name any of whose addresses is non-public and not allowed
 * (BULKORDER_NOTIFY_ALLOW_PRIVATE): net.connect then fails with WEBHOOK_ADDRESS_REFUSED, before a byte is sent.
 */
function guardedLookup(allowance: PrivateAllowance, lookup: typeof dnsLookup): LookupFunction {
  return (hostname, options, callback) => {
    lookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
      if (error !== null) return callback(error, '', 0);
      const problem = addresses.map((a) => addressProblem(hostname, a.address, allowance)).find((p) => p !== undefined);
      const [first] = addresses;
      if (problem !== undefined || first === undefined) {
        const refused: NodeJS.ErrnoException = new Error(problem ?? `${hostname} resolves to no address`);
        refused.code = ADDRESS_REFUSED;
        return callback(refused, '', 0);
      }
      if (options.all === true) return callback(null, addresses);
      return callback(null, first.address, first.family);
    });
  };
}

async function postWithRetries(
  url: string,
  body: string,
  options: { timeoutMs: number; allowPrivate: PrivateAllowance; dispatcher: Agent },
): Promise<void> {
  const { timeoutMs } = options;
  // An address literal (or localhost) is not looked up by the connection: judged here.
  const literal = hostProblem(new URL(url).hostname, options.allowPrivate);
  if (literal !== undefined) throw new Error(`${ADDRESS_REFUSED}: ${literal}`);
  let last = '';
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    try {
      const response = await request(url, {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json', 'user-agent': 'bulkorder-notify' },
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
        signal: AbortSignal.timeout(timeoutMs),
        dispatcher: options.dispatcher,
      });
      await response.body.dump();
      if (response.statusCode < 300) return;
      if (response.statusCode < 400) {
        // Never followed: a redirect could lead anywhere the address check did not see.
        last = `HTTP ${response.statusCode}: a redirect, not followed (a webhook is posted to its configured address only)`;
        break;
      }
      last = `HTTP ${response.statusCode}`;
      // A 4xx other than 408/429 will not change on a resend.
      if (response.statusCode < 500 && response.statusCode !== 408 && response.statusCode !== 429) break;
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code === ADDRESS_REFUSED)
        throw new Error(`${ADDRESS_REFUSED}: ${(error as Error).message}`, { cause: error });
      last = code ?? (error as Error).name;
    }
    if (attempt < ATTEMPTS) await sleep(FIRST_DELAY_MS * 2 ** (attempt - 1));
  }
  throw new Error(last);
}

function mailText(event: NotifyEvent): string {
  const lines = [event.text, ''];
  if (event.batchId !== undefined)
    lines.push(`batch: ${event.batchId}${event.file === undefined ? '' : ` (${event.file})`}`);
  if (event.counts !== undefined)
    lines.push(
      `counts: ${Object.entries(event.counts)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')}`,
    );
  if (event.exitCode !== undefined) lines.push(`exit code: ${event.exitCode}`);
  if (event.topErrorCodes !== undefined && event.topErrorCodes.length > 0)
    lines.push(`top error codes: ${event.topErrorCodes.map((c) => `${c.code} (${c.count})`).join(', ')}`);
  if (event.reason !== undefined) lines.push(`reason: ${event.reason}`);
  if (event.nextTrialAt !== undefined) lines.push(`next trial: ${event.nextTrialAt}`);
  if (event.waiting !== undefined)
    lines.push(`waiting: ${event.waiting.jobs} jobs, ${event.waiting.burst} dead letters to send again`);
  if (event.closedBy !== undefined) lines.push(`closed by: ${event.closedBy}`);
  if (event.dashboardUrl !== undefined) lines.push(`dashboard: ${event.dashboardUrl}`);
  lines.push(`environment: ${event.env}`, `at: ${event.at}`, `event id: ${event.id}`);
  return lines.join('\n') + '\n';
}
