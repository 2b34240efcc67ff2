/** Turns a {@link ScriptedResponse} into an answer, naming its machine code for the counters. */
import type { Answer } from './answer.js';
import type { ScriptedResponse } from './simulatorTypes.js';

/** The answer a script entry forces; error statuses are counted under the body's `code` or `error`, else HTTP_<status>. */
export function scriptedAnswer(entry: ScriptedResponse): Answer {
  const answer: Answer = { status: entry.status };
  if (entry.body !== undefined) answer.body = entry.body;
  if (entry.headers !== undefined) answer.headers = entry.headers;
  if (entry.status >= 400) {
    const body = entry.body as Record<string, unknown> | string | undefined;
    const named = typeof body === 'object' && body !== null ? (body.code ?? body.error) : undefined;
    answer.code = typeof named === 'string' ? named : `HTTP_${entry.status}`;
  }
  return answer;
}
