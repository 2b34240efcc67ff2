/**
 * Answer profiles: what the spec leaves "not shown" (status codes per case, response field
 * names, identifier types, error body shapes), chosen per simulator. The default profile is the
 * simulator's original guess; the others are other reasonable APIs within the same spec, so
 * tests can run every flow against each (test/reliability/answerProfiles.test.ts).
 */
import { UsageError } from '../errors.js';
import type { Answer } from './answer.js';
import type { AnswerProfile } from './simulatorTypes.js';

export type { AnswerProfile } from './simulatorTypes.js';

/** The simulator's original answers. */
const DEFAULT_PROFILE: AnswerProfile = {
  unknownCustomerStatus: 422,
  ids: 'string',
  loginUrl: 'loginUrl',
  success: { status: 201, body: true },
  errors: 'code-message',
  userAgentRefusal: { status: 400, code: 'USER_AGENT_INVALID' },
  idempotency: 'ignore',
};

const USER_AGENT_REQUIRED = { status: 400, code: 'USER_AGENT_REQUIRED' } as const;

/**
 * The named profiles; between them every value of every dimension occurs. A profile added here
 * is run by the end-to-end profile tests automatically.
 */
export const ANSWER_PROFILES: Readonly<Record<string, Readonly<AnswerProfile>>> = Object.freeze({
  default: DEFAULT_PROFILE,
  'integer-ids': {
    ...DEFAULT_PROFILE,
    unknownCustomerStatus: 404,
    ids: 'integer',
    loginUrl: 'url',
    success: { status: 200, body: true },
    errors: 'errors-array',
    userAgentRefusal: USER_AGENT_REQUIRED,
  },
  'problem-json': {
    ...DEFAULT_PROFILE,
    loginUrl: 'nested',
    success: { status: 201, body: false },
    errors: 'problem',
    userAgentRefusal: USER_AGENT_REQUIRED,
    idempotency: 'honour',
  },
  'oauth-errors': {
    ...DEFAULT_PROFILE,
    unknownCustomerStatus: 403,
    ids: 'integer',
    loginUrl: 'nested',
    success: { status: 200, body: false },
    errors: 'oauth',
    userAgentRefusal: USER_AGENT_REQUIRED,
    idempotency: 'honour',
  },
  'html-errors': {
    ...DEFAULT_PROFILE,
    ids: 'integer',
    errors: 'html',
    userAgentRefusal: { status: 403, code: 'USER_AGENT_REQUIRED' },
  },
  bare: {
    ...DEFAULT_PROFILE,
    unknownCustomerStatus: 404,
    ids: 'digits',
    loginUrl: 'url',
    success: { status: 200, body: false },
    errors: 'empty',
    userAgentRefusal: USER_AGENT_REQUIRED,
  },
});

/** A profile by name, or dimensions over the default; throws UsageError SIMULATOR_PROFILE_UNKNOWN. */
export function resolveProfile(profile: string | Partial<AnswerProfile> | undefined): AnswerProfile {
  if (profile === undefined) return DEFAULT_PROFILE;
  if (typeof profile !== 'string') return { ...DEFAULT_PROFILE, ...profile };
  const named = ANSWER_PROFILES[profile];
  if (named === undefined)
    throw new UsageError(
      'SIMULATOR_PROFILE_UNKNOWN',
      `unknown simulator profile '${profile}'; choose one of ${Object.keys(ANSWER_PROFILES).join(', ')}`,
    );
  return named;
}

/**
 * Rewrites an application error answer (`{code, message, details?}`, as the handlers build
 * it) into the profile's error shape. The counted `code` and the headers stay.
 */
export function shapeError(answer: Answer, profile: AnswerProfile): Answer {
  if (answer.status < 400 || profile.errors === 'code-message') return answer;
  const body =
    typeof answer.body === 'object'
      ? (answer.body as { code?: string; message?: string; details?: { path: string; problem: string }[] })
      : {};
  const code = body.code ?? answer.code ?? `HTTP_${answer.status}`;
  const message = body.message ?? '';
  const headers = { ...answer.headers };
  const shaped = (value: string | object | undefined): Answer => ({
    status: answer.status,
    ...(value === undefined ? {} : { body: value }),
    ...(answer.code === undefined ? {} : { code: answer.code }),
    headers,
  });
  switch (profile.errors) {
    case 'oauth':
      return shaped({ error: code.toLowerCase(), error_description: message });
    case 'problem':
      headers['content-type'] = 'application/problem+json';
      return shaped({
        type: `https://api.example.test/problems/${code.toLowerCase().replaceAll('_', '-')}`,
        title: titleOf(code),
        status: answer.status,
        detail: message,
        ...(body.details === undefined ? {} : { invalidParams: body.details }),
      });
    case 'errors-array':
      return shaped({
        errors:
          body.details === undefined
            ? [{ code, message }]
            : body.details.map((d) => ({ code, message: d.problem, field: d.path })),
      });
    case 'html':
      return shaped(
        `<html><head><title>${answer.status}</title></head><body><h1>${answer.status} ${titleOf(code)}</h1><p>${escapeHtml(message)}</p></body></html>\n`,
      );
    case 'empty':
      return shaped(undefined);
  }
}

function titleOf(code: string): string {
  const words = code.toLowerCase().replaceAll('_', ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
}
