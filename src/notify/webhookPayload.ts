import type { NotifyEvent } from './notifyEvent.js';

/** What a webhook receives: our JSON (default), Slack's `text` + `blocks`, or a Teams Adaptive Card. */
export type WebhookFormat = 'json' | 'slack' | 'teams';

/**
 * The format of one BULKORDER_NOTIFY_URLS entry and the URL to post to: an explicit `slack:`,
 * `teams:` or `json:` before the URL wins (a proxy or a self-hosted receiver), else the host
 * tells (hooks.slack.com; Teams' office.com, Power Automate and Logic Apps hosts), else JSON.
 */
export function webhookTarget(entry: string): { format: WebhookFormat; url: string } {
  const explicit = /^(slack|teams|json):(?=https?:\/\/)/i.exec(entry);
  if (explicit !== null)
    // The match is the format and its colon.
    return { format: explicit[0].slice(0, -1).toLowerCase() as WebhookFormat, url: entry.slice(explicit[0].length) };
  let host: string;
  try {
    host = new URL(entry).hostname.toLowerCase();
  } catch {
    return { format: 'json', url: entry };
  }
  if (host === 'hooks.slack.com' || host.endsWith('.slack.com')) return { format: 'slack', url: entry };
  if (
    /(^|\.)(webhook\.office\.com|outlook\.office\.com|logic\.azure\.com|powerautomate\.com|powerplatform\.com)$/.test(
      host,
    )
  )
    return { format: 'teams', url: entry };
  return { format: 'json', url: entry };
}

/** The body for one webhook in its format. */
export function webhookPayload(format: WebhookFormat, event: NotifyEvent): unknown {
  if (format === 'slack') return slack(event);
  if (format === 'teams') return teams(event);
  return event;
}

/** The facts beside the text, as label/value pairs (the same in Slack and Teams). */
function facts(event: NotifyEvent): { title: string; value: string }[] {
  const out: { title: string; value: string }[] = [
    { title: 'Event', value: event.event },
    { title: 'Environment', value: event.env },
  ];
  if (event.batchId !== undefined)
    out.push({ title: 'Batch', value: `${event.batchId}${event.file === undefined ? '' : ` (${event.file})`}` });
  if (event.counts !== undefined)
    out.push({
      title: 'Counts',
      value: Object.entries(event.counts)
        .map(([k, v]) => `${k} ${v}`)
        .join(', '),
    });
  if (event.exitCode !== undefined) out.push({ title: 'Exit code', value: String(event.exitCode) });
  if (event.code !== undefined) out.push({ title: 'Code', value: event.code });
  if (event.topErrorCodes !== undefined && event.topErrorCodes.length > 0)
    out.push({ title: 'Top error codes', value: event.topErrorCodes.map((c) => `${c.code} (${c.count})`).join(', ') });
  if (event.nextTrialAt !== undefined) out.push({ title: 'Next trial', value: event.nextTrialAt });
  if (event.waiting !== undefined)
    out.push({ title: 'Waiting', value: `${event.waiting.jobs} jobs, ${event.waiting.burst} dead letters to resend` });
  if (event.closedBy !== undefined) out.push({ title: 'Closed by', value: event.closedBy });
  if (event.schedule !== undefined) out.push({ title: 'Schedule', value: event.schedule });
  out.push({ title: 'Event id', value: event.id });
  return out;
}

/** Slack incoming webhook: `text` is the notification's fallback, `blocks` what people see. */
function slack(event: NotifyEvent): unknown {
  const [headline = '', ...rest] = event.text.split('\n');
  const blocks: unknown[] = [
    { type: 'section', text: { type: 'mrkdwn', text: escapeSlack(headline) } },
    {
      type: 'section',
      fields: facts(event)
        .slice(0, 10)
        .map((f) => ({ type: 'mrkdwn', text: `*${f.title}*\n${escapeSlack(f.value)}` })),
    },
  ];
  if (event.dashboardUrl !== undefined)
    blocks.push({
      type: 'actions',
      elements: [{ type: 'button', text: { type: 'plain_text', text: 'Open the dashboard' }, url: event.dashboardUrl }],
    });
  else if (rest.length > 0)
    blocks.push({ type: 'context', elements: [{ type: 'mrkdwn', text: escapeSlack(rest.join('\n')) }] });
  return { text: event.text, blocks };
}

/** Microsoft Teams (Workflows / incoming webhook): one message carrying an Adaptive Card. */
function teams(event: NotifyEvent): unknown {
  const [headline = ''] = event.text.split('\n');
  const attention = /needs-attention|opened|still-open|refused|failed/.test(event.event);
  const card = {
    $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
    type: 'AdaptiveCard',
    version: '1.4',
    body: [
      { type: 'TextBlock', text: headline, wrap: true, weight: 'Bolder', ...(attention ? { color: 'Attention' } : {}) },
      { type: 'FactSet', facts: facts(event) },
    ],
    ...(event.dashboardUrl === undefined
      ? {}
      : { actions: [{ type: 'Action.OpenUrl', title: 'Open the dashboard', url: event.dashboardUrl }] }),
  };
  return {
    type: 'message',
    attachments: [{ contentType: 'application/vnd.microsoft.card.adaptive', contentUrl: null, content: card }],
  };
}

/** Slack's three control characters in mrkdwn. */
function escapeSlack(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}

/**
 * A webhook URL as logs may show it: scheme, host and first path segment; user, password, the
 * rest of the path (where Slack and Teams put their token) and the query masked.
 */
export function maskWebhookUrl(url: string): string {
  try {
    const u = new URL(url);
    const [first, ...rest] = u.pathname.split('/').filter((p) => p !== '');
    const path = first === undefined ? '/' : `/${first}${rest.length > 0 ? '/***' : ''}`;
    return `${u.protocol}//${u.username !== '' || u.password !== '' ? '***@' : ''}${u.host}${path}${u.search === '' ? '' : '?***'}`;
  } catch {
    return '(not a URL)';
  }
}
