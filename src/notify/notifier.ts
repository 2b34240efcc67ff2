import { setTimeout as sleep } from 'node:timers/promises';
import { createTransport, type Transporter } from 'nodemailer';
import { request } from 'undici';
import type { NotifySettings } from '../config.js';
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
  options: { onFailure?: NotificationFailureSink } = {},
): Notifier {
  const mail: Transporter | undefined =
    settings.smtp === undefined
      ? undefined
      : createTransport({
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
  const smtp = settings.smtp;
  const hooks = settings.urls.map((secret, i) => {
    const target = webhookTarget(secret.reveal());
    return { ...target, position: i + 1, masked: maskWebhookUrl(target.url) };
  });
  return {
    enabled: settings.urls.length > 0 || mail !== undefined,
    async notify(event) {
      const sends = hooks.map((hook) =>
        postWithRetries(hook.url, JSON.stringify(webhookPayload(hook.format, event)), settings.timeoutMs).then(
          () =>
            logger.info(
              { event: event.event, id: event.id, webhook: hook.position, url: hook.masked },
              'notification sent',
            ),
          (error: unknown) => {
            options.onFailure?.(hook.masked);
            logger.warn(
              {
                event: event.event,
                id: event.id,
                webhook: hook.position,
                url: hook.masked,
                format: hook.format,
                reason: (error as Error).message,
              },
              `notification to webhook ${hook.position} (${hook.masked}) failed after ${ATTEMPTS} attempts`,
            );
          },
        ),
      );
      if (mail !== undefined && smtp !== undefined) {
        sends.push(
          mail
            .sendMail({
              from: smtp.from,
              to: [...smtp.to],
              subject: `[bulkorder ${event.env}] ${event.text.split('\n')[0]}`,
              text: mailText(event),
            })
            .then(
              () => logger.info({ event: event.event }, 'notification e-mailed'),
              (error: unknown) => {
                options.onFailure?.('email');
                logger.warn(
                  { event: event.event, id: event.id, reason: (error as Error).message },
                  'notification e-mail failed',
                );
              },
            ),
        );
      }
      await Promise.all(sends);
    },
    close() {
      mail?.close();
    },
  };
}

async function postWithRetries(url: string, body: string, timeoutMs: number): Promise<void> {
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
      });
      await response.body.dump();
      if (response.statusCode < 300) return;
      last = `HTTP ${response.statusCode}`;
      // A 4xx other than 408/429 will not change on a resend.
      if (response.statusCode < 500 && response.statusCode !== 408 && response.statusCode !== 429) break;
    } catch (error) {
      last = (error as { code?: string }).code ?? (error as Error).name;
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
