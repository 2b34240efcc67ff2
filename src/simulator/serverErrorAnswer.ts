/**
 * The 5xx answers a real service behind a gateway gives: JSON from the application, HTML from
 * the proxy in front of it, Retry-After sometimes in seconds and sometimes as an HTTP-date.
 */
import { apiError, type Answer } from './answer.js';

const HTML = (status: number, title: string): string =>
  `<html><head><title>${status} ${title}</title></head><body><center><h1>${status} ${title}</h1></center><hr><center>simulator</center></body></html>\n`;

/**
 * The 5xx answer number `variant` (0-4): 500 JSON; 502 HTML; 503 JSON with Retry-After in
 * seconds; 503 HTML with Retry-After as an HTTP-date; 504 HTML.
 */
export function serverErrorAnswer(variant: number, retryAfterSeconds: number): Answer {
  const seconds = Math.max(0, Math.ceil(retryAfterSeconds));
  switch (variant) {
    case 0:
      return apiError(500, 'INTERNAL_ERROR', 'An unexpected error occurred; try again later.');
    case 1:
      return { status: 502, body: HTML(502, 'Bad Gateway'), code: 'BAD_GATEWAY' };
    case 2:
      return apiError(503, 'SERVICE_UNAVAILABLE', 'The service is temporarily unavailable.', {
        headers: {
          'retry-after': String(seconds),
        },
      });
    case 3:
      // Wall clock on purpose (not the injectable clock): clients compare it with their own Date.now.
      return {
        status: 503,
        body: HTML(503, 'Service Temporarily Unavailable'),
        code: 'SERVICE_UNAVAILABLE',
        headers: { 'retry-after': new Date(Date.now() + seconds * 1000).toUTCString() },
      };
    default:
      return { status: 504, body: HTML(504, 'Gateway Time-out'), code: 'GATEWAY_TIMEOUT' };
  }
}

/** The answer of a lost acknowledgement: the order was stored, the client learns nothing. */
export function lostAcknowledgementAnswer(): Answer {
  return apiError(500, 'INTERNAL_ERROR', 'An unexpected error occurred; try again later.');
}
