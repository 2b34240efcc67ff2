/**
 * The catalogue: every exit code and every error code bulkorder itself can show a person, each
 * described once, here. docs/errors.md is generated from this file (`npm run docs:errors`); the
 * summaries' descriptions of rejected rows and notes, the exit codes of `--help` and the HTTP
 * status of a refused upload are read from it. test/errors/errorCatalogue.test.ts holds the two
 * together: every code the source emits is here, every code here is emitted, and the doc is what
 * this table generates.
 *
 * To add a code: one entry below, in alphabetical order (parallel branches then add in different
 * places and merge cleanly), then `npm run docs:errors`. Codes the remote API puts in its answers
 * are not ours and are not listed: they are passed on as they came (`passedOn`).
 */

/** Documented exit codes (README, "Exit codes"). */
export const ExitCode = {
  ok: 0,
  internal: 1,
  usage: 2,
  fileRefused: 3,
  needsAttention: 4,
  infrastructure: 5,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** What each exit code means, in the words of `--help` and README; `--json` answers carry it as `exitMeaning`. */
export const EXIT_CODE_MEANINGS: Readonly<Record<ExitCode, string>> = {
  0: 'ok',
  1: 'internal error',
  2: 'usage or configuration error',
  3: 'file refused as a whole',
  4: 'some rows or orders need attention',
  5: 'infrastructure unavailable (Redis, API, token endpoint)',
};

/** The meaning of an exit code (`unknown` for one we never use); above 128, the shell's convention for a signal. */
export function exitMeaning(code: number): string {
  return (
    (EXIT_CODE_MEANINGS as Record<number, string>)[code] ?? (code > 128 ? `stopped by signal ${code - 128}` : 'unknown')
  );
}

/** Where a person meets a code; the sections of docs/errors.md, in this order. */
export const CODE_PLACES = {
  refusal:
    'A command stops with it (stderr, `"refused": {"code": ...}` with `--json`, the exit code), or a dashboard upload, a dropped or a scheduled file is refused with it',
  row: 'A rejected row or record: `reject_codes` in the rejects file, the results file, the summary\'s "Top error kinds" (`validate --json`: `errorKinds`). Nothing of its order is sent; the run ends with exit 4',
  note: 'A note on an accepted row or a delivered order: the summary\'s "Notes" (`noteKinds`), the results file\'s `notes` and `errorCode` columns. Nothing was refused',
  delivery:
    "Why an order's attempt did not deliver it: the dead letter or held record (`dead-letters show`, `review show`), the results file's `errorCode`, the worker's log, notifications",
  worker:
    'What a worker reports about the API, Redis or a job: `status`, the dashboard, `/readyz`, notifications and the log',
} as const;
export type CodePlace = keyof typeof CODE_PLACES;

interface CodeEntry {
  /** Where a person meets it, the main place first (the section of docs/errors.md it is listed in). */
  readonly seen: readonly [CodePlace, ...CodePlace[]];
  /** The exit code of a command that stops with it; `signal`: 128 + the signal's number. */
  readonly exit?: ExitCode | 'signal';
  /** The HTTP status a page or endpoint answers it with, where that is not the usual one of its place. */
  readonly http?: number;
  /** What it means, in one short line (the summaries show it beside the code). */
  readonly meaning: string;
  /** What to do about it. */
  readonly action: string;
}

export const ERROR_CODES = {
  ABORTED: {
    seen: ['delivery'],
    meaning: 'the request was cancelled while it was under way (the worker was stopping)',
    action:
      'Nothing: a request cut before it was sent is retried; one cut after it was sent is held for review (see OUTCOME_UNKNOWN).',
  },
  ADDRESS_NOT_AVAILABLE: {
    seen: ['delivery'],
    meaning: 'no local address to connect from (EADDRNOTAVAIL); the request was never sent',
    action: "Retried with backoff. Check the worker host's network if it lasts.",
  },
  AGE_INVALID: {
    seen: ['refusal'],
    exit: 2,
    meaning: '--older-than or --newer-than is not an age',
    action: 'Give an age like 30m, 12h, 7d or 2w.',
  },
  BATCH_CANCELLED: {
    seen: ['refusal', 'delivery'],
    exit: 2,
    meaning:
      'the batch was cancelled by a person (`batch cancel`): its order was never sent, or there is nothing left to act on',
    action:
      '`bulkorder batch show <batch>` says who cancelled it and why; import the fixed file again to send its orders.',
  },
  BATCH_HELD: {
    seen: ['refusal', 'worker'],
    exit: 5,
    meaning:
      "the batch's canary was refused with one cause (status + code) for more than BULKORDER_CANARY_REFUSED_PERCENT of it: the batch holds itself, other batches go on",
    action:
      'Fix the content (a wrong catalogue) and `bulkorder batch cancel <batch>`, or `bulkorder batch release <batch>` to send the rest; a probe resumes it on its own once the API accepts.',
  },
  BATCH_NOT_FOUND: {
    seen: ['refusal'],
    exit: 2,
    meaning: 'no batch of that id in this environment',
    action: '`bulkorder status` lists recent batches; check BULKORDER_ENV and --accounts.',
  },
  BODY_TIMEOUT: {
    seen: ['delivery'],
    meaning: 'the answer started but its body stopped coming; the order may have been stored',
    action:
      'Held for review, never re-sent blindly: check the order on the service, then `review resolve --delivered` or `review release`.',
  },
  CLIENT_CLOSED: {
    seen: ['delivery'],
    meaning: 'the HTTP client was closed while the request was under way (the worker was stopping)',
    action: 'Nothing: retried if it was not sent, held for review if it may have been.',
  },
  COLUMNS_MISSING: {
    seen: ['refusal'],
    exit: 3,
    meaning: 'the file lacks a required column',
    action:
      'Rename the columns, or map them with `--map mapping.json` (the message names the closest headers; the dashboard upload offers the mapping).',
  },
  COLUMN_DUPLICATE: {
    seen: ['refusal'],
    exit: 3,
    meaning: 'two columns of the file mean the same field',
    action: 'Remove one, or ignore one with `--map` (`{"Column": ""}`).',
  },
  COMPANY_ID_INVALID: {
    seen: ['row', 'refusal'],
    exit: 2,
    meaning: 'a companyId that is not a UUID',
    action:
      'Give the company UUID (like 3f2b8c1e-6d4a-4b7e-9f10-2a5c7d8e9b01), in the file or to `accounts login-url`.',
  },
  CONFIG_INVALID: {
    seen: ['refusal'],
    exit: 2,
    meaning: 'a setting (BULKORDER_* variable, REDIS_URL, --config-file) is missing or refused',
    action: 'Fix the variable the message names; `bulkorder config` shows every setting and where it came from.',
  },
  CONNECTION_RESET: {
    seen: ['delivery'],
    meaning: 'the connection was reset (ECONNRESET, EPIPE)',
    action:
      'Retried if the request had not left; held for review if it had (check the service, then resolve or release).',
  },
  CONNECT_REFUSED: {
    seen: ['delivery'],
    meaning: 'the API refused the connection (ECONNREFUSED); the request was never sent',
    action: 'Retried with backoff; many in a row open the circuit breaker (NO_CONNECTION). Check BULKORDER_BASE_URL.',
  },
  CONNECT_TIMEOUT: {
    seen: ['delivery'],
    meaning: 'the connection (TCP or TLS) was not made in time; the request was never sent',
    action: 'Retried with backoff. Check the network between the worker and the API.',
  },
  CONTROL_CHARACTER: {
    seen: ['row'],
    meaning: 'text holds a tab or other control character (line breaks are joined, not refused)',
    action: 'Remove the character. An Excel "ANSI" export: read it with `--encoding windows-1252`.',
  },
  COUNTRY_CODE_INVALID: {
    seen: ['row'],
    meaning: 'not an ISO 3166-1 two-letter country code',
    action: 'Write the two-letter code (NL, BE, DE; GB, not UK).',
  },
  CREDENTIALS_REFUSED: {
    seen: ['worker'],
    meaning: 'the circuit breaker opened: the API or its token endpoint refuses our credentials',
    action:
      'Fix BULKORDER_*_CLIENT_ID / _SECRET (`bulkorder token` checks them); jobs wait without spending attempts and go on when it closes.',
  },
  CRON_INVALID: {
    seen: ['refusal'],
    exit: 2,
    meaning: '--cron is not a cron pattern',
    action: 'Give five fields, e.g. "0 2 * * *" for every night at 02:00.',
  },
  CSV_FIELD_COUNT: {
    seen: ['row'],
    meaning: 'a CSV row has more or fewer cells than the header',
    action: 'Look for a delimiter inside an unquoted value, or a missing cell, on that line.',
  },
  CSV_QUOTE: {
    seen: ['row'],
    meaning: 'a CSV row has a misplaced double quote',
    action: 'Quote the whole value and double the quotes inside it ("12 ""A""").',
  },
  CSV_QUOTE_NOT_CLOSED: {
    seen: ['refusal'],
    exit: 3,
    meaning: 'a quoted CSV value is never closed, so the rest of the file would be one value',
    action: 'Look for a stray double quote (") at the line the message names.',
  },
  CSV_RECORD_TOO_LARGE: {
    seen: ['refusal'],
    exit: 3,
    meaning: 'a CSV record is longer than the record-size cap (64 KiB)',
    action: 'Usually a double quote that is not closed; fix it at the line the message names.',
  },
  CSV_UNREADABLE: {
    seen: ['refusal'],
    exit: 3,
    meaning: 'the file cannot be read as CSV',
    action: 'Export it again as "CSV UTF-8"; the message says where reading stopped.',
  },
  CUSTOMER_ID_INVALID: {
    seen: ['refusal'],
    exit: 2,
    meaning: '--customer-id is not a value account creation returns',
    action: 'Give the customerId the accounts import wrote to its results file.',
  },
  CUSTOMER_ID_MISSING: {
    seen: ['delivery'],
    meaning: 'the API created the account but its answer names no customerId',
    action:
      'Held for review: find the customerId on the service, or set BULKORDER_CUSTOMER_ID_FIELDS to the field that holds it.',
  },
  CUSTOMER_ID_UNKNOWN: {
    seen: ['refusal'],
    exit: 4,
    meaning: 'no customerId is known for this employee (the account was not delivered by us)',
    action: 'Import the account first (`bulkorder accounts import`), or pass --customer-id.',
  },
  DASHBOARD_TOKEN_REQUIRED: {
    seen: ['refusal'],
    exit: 2,
    meaning: 'the dashboard would listen beyond this machine without a token',
    action: 'Set BULKORDER_DASHBOARD_TOKEN, or keep the default --host 127.0.0.1.',
  },
  DATA_VERSION_NEWER: {
    seen: ['refusal'],
    exit: 5,
    meaning: 'Redis holds data of a newer bulkorder than this one; reading it could damage it',
    action: 'Run the newer bulkorder (both versions are named), or give this one its own BULKORDER_ENV.',
  },
  DEADLINE_EXCEEDED: {
    seen: ['delivery'],
    meaning: 'the request took longer than its deadline (BULKORDER_HTTP_DEADLINE_MS)',
    action: 'Retried if it was not sent; held for review if it may have been. Raise the deadline for a slow API.',
  },
  DEAD_LETTER_NOT_FOUND: {
    seen: ['refusal'],
    exit: 2,
    meaning: 'no dead letter with that key',
    action: '`bulkorder dead-letters list` shows the keys.',
  },
  DELIMITER_INVALID: {
    seen: ['refusal'],
    exit: 2,
    meaning: '--delimiter is not one character (or "tab")',
    action: 'Give "tab" or one character other than a quote or line break.',
  },
  DELIMITER_UNKNOWN: {
    seen: ['refusal'],
    exit: 3,
    meaning: 'the header reads as one column: its delimiter is not , ; tab or |',
    action: 'Give it with --delimiter (the message names the likely one).',
  },
  DEMO_DEADLINE: {
    seen: ['refusal'],
    exit: 5,
    meaning: 'the demo did not finish within --max-wait (default 600 s)',
    action:
      'The message names what it waited for. Nothing is lost or sent twice: run it again, or give it longer with --max-wait.',
  },

  DNS_NOT_FOUND: {
    seen: ['delivery'],
    meaning: "the API's host name does not resolve (ENOTFOUND); the request was never sent",
    action: 'Retried with backoff. Check BULKORDER_BASE_URL and DNS.',
  },
  DNS_TEMPORARY_FAILURE: {
    seen: ['delivery'],
    meaning: 'DNS did not answer (EAI_AGAIN); the request was never sent',
    action: 'Retried with backoff.',
  },
  DRAFT_ORDERS_UNDOCUMENTED: {
    seen: ['refusal'],
    exit: 2,
    meaning: 'the draft-orders check of the Cafetariaplan API is not in the spec',
    action: 'Nothing to fix here: src/accounts/draftOrders.ts says how to add it once the API documents it.',
  },
  DUPLICATE_ACCOUNT: {
    seen: ['row'],
    meaning: 'an employee (companyId + email) is on more than one row of the file',
    action: 'Keep one row per employee.',
  },
  DUPLICATE_ACK_WHY_MISSING: {
    seen: ['refusal'],
    exit: 2,
    meaning: '`review duplicates ack` without --why: an acknowledgement records why',
    action: 'Say why they need nothing more: `bulkorder review duplicates ack --batch <id> --why "..."`.',
  },
  DUPLICATE_ORDER_REF: {
    seen: ['row'],
    meaning: 'two complete JSON orders use the same orderRef',
    action: 'Give each order its own orderRef, or merge them.',
  },
  DUPLICATE_PRODUCT: {
    seen: ['row'],
    meaning: 'one order lists the same product twice (with --strict-products)',
    action: 'Put the total on one line; without --strict-products such lines are merged (PRODUCTS_MERGED).',
  },
  EMAIL_INVALID: {
    seen: ['row', 'refusal'],
    exit: 2,
    meaning: 'not a valid e-mail address',
    action: 'Give exactly one address like name@example.com, in the file or to `accounts login-url`.',
  },
  ENCODING_INVALID: {
    seen: ['refusal'],
    exit: 3,
    meaning: 'the file is not valid UTF-8',
    action: 'An Excel "ANSI" export: run again with `--encoding windows-1252`, or save it as "CSV UTF-8".',
  },
  ENCODING_MISMATCH: {
    seen: ['refusal'],
    exit: 3,
    meaning: 'the file starts with a UTF-8 byte-order mark but --encoding names another encoding',
    action: 'Leave out --encoding.',
  },
  ENCODING_OPTION_INVALID: {
    seen: ['refusal'],
    exit: 2,
    meaning: '--encoding is not one we read',
    action: 'Give utf-8, windows-1252 or latin1.',
  },
  ENCODING_UNSUPPORTED: {
    seen: ['refusal'],
    exit: 3,
    meaning: 'the file is UTF-16 ("Unicode text")',
    action: 'Save it as "CSV UTF-8".',
  },
  ERROR_BODY_2XX: {
    seen: ['delivery'],
    meaning:
      'the API answered 2xx but its body is an error (a field of BULKORDER_ERROR_BODY_FIELDS) and names no order id: it may or may not have stored the order',
    action:
      'Held for review with the body kept: read it (`review show`), check the service, then `review resolve --delivered` or `review release`.',
  },
  EXCEL_TEXT_UNWRAPPED: {
    seen: ['note'],
    meaning: 'an Excel ="..." cell (written to keep a leading + or 0) read as the text inside',
    action: 'Nothing.',
  },
  EXPORT_WRITE_FAILED: {
    seen: ['refusal'],
    exit: 5,
    meaning: 'a dead-letter export file could not be written (a full disk, a quota, an I/O error)',
    action: 'Free space and export again; no half-written file is left and no dead letter was changed.',
  },
  FIELD_REQUIRED: {
    seen: ['row'],
    meaning: 'a required value is empty',
    action: 'Fill in the value (the rejects file names the line and column).',
  },
  FIELD_TYPE: {
    seen: ['row'],
    meaning: 'a JSON value has the wrong type (e.g. an object where text belongs)',
    action: "Give the value the API's type (text, number, list).",
  },
  FILE_CHANGED_WHILE_READ: {
    seen: ['refusal'],
    exit: 3,
    meaning:
      'the file grew, shrank, was written to or replaced while the import read it (its size, modification time or inode differ at the end of the read from the start): it is still being written',
    action:
      'Nothing of it is sent: a change found before anything was queued creates nothing, one found later cancels the batch (`batch show` says so). Import it again once the writer has finished; nothing is sent twice.',
  },
  FILE_EMPTY: {
    seen: ['refusal'],
    exit: 3,
    meaning: 'the file has no orders (empty, blank lines, header only, [])',
    action: 'Check the export; pass --allow-empty if an empty file is expected.',
  },
  FILE_NOT_TEXT: {
    seen: ['refusal'],
    exit: 3,
    meaning: 'the file is binary (gzip, ZIP/.xlsx, PDF) or holds NUL bytes',
    action: 'Export it as "CSV UTF-8" or JSON; the message says what the file is. Nothing of it was queued.',
  },
  FILE_TOO_LARGE: {
    seen: ['refusal'],
    exit: 3,
    http: 413,
    meaning: 'an upload larger than the dashboard takes (BULKORDER_UPLOAD_MAX_BYTES)',
    action: 'Import it with `bulkorder import`, or raise the limit.',
  },
  FILE_UNREADABLE: {
    seen: ['refusal'],
    exit: 3,
    meaning: 'the file cannot be opened, or is not a regular file',
    action: 'Check the path and its permissions.',
  },
  FORMAT_INVALID: {
    seen: ['refusal'],
    exit: 2,
    meaning: '--format is not csv, json or ndjson',
    action: 'Give csv, json or ndjson.',
  },
  FORMAT_UNKNOWN: {
    seen: ['refusal'],
    exit: 2,
    meaning: "the file's extension does not say its format",
    action: 'Pass --format csv, json or ndjson.',
  },
  FORMULA_TEXT: {
    seen: ['row'],
    meaning: 'text is a spreadsheet formula (=HYPERLINK(...)), never a real name or address',
    action: 'Replace it with the value itself.',
  },
  HEADERS_TIMEOUT: {
    seen: ['delivery'],
    meaning: 'the request was sent but no answer came in time; the order may have been stored',
    action:
      'Held for review, never re-sent blindly: check the order on the service, then `review resolve --delivered` or `review release`.',
  },
  HEADER_INVALID: {
    seen: ['refusal'],
    exit: 3,
    meaning: 'no header line within the first 64 KiB',
    action: 'Give a CSV file whose first line names the columns.',
  },
  HELD_ORDER_NOT_FOUND: {
    seen: ['refusal'],
    exit: 2,
    meaning: 'no order held for review with that key',
    action: '`bulkorder review list` shows the keys.',
  },
  HOST_UNREACHABLE: {
    seen: ['delivery'],
    meaning: "no route to the API's host (EHOSTUNREACH); the request was never sent",
    action: 'Retried with backoff. Check the network.',
  },
  HTTP_LISTEN_FAILED: {
    seen: ['refusal'],
    exit: 5,
    meaning: "the worker's HTTP port (metrics, health) cannot listen",
    action: 'Choose another --http-port or --host (the message names why: in use, no permission).',
  },
  IDENTICAL_ORDERS_TOO_MANY: {
    seen: ['row'],
    meaning: 'one order without orderRef is repeated over more lines than one order may have (a pasted row?)',
    action: 'Put the total in quantity, or give each gift its own orderRef.',
  },
  IMPORT_FAILED: {
    seen: ['refusal'],
    exit: 1,
    meaning: 'an import stopped and left no reason (in a batch notification)',
    action: "Read the importer's log; run the same import again (nothing is sent twice).",
  },
  IMPORT_INTERRUPTED: {
    seen: ['refusal'],
    exit: 5,
    meaning: 'Redis did not hear from this import for a while, so its batch was closed as interrupted',
    action: 'Run the same command again to finish the file; nothing is sent twice.',
  },
  INTEGER_INVALID: {
    seen: ['row'],
    meaning: 'not a whole number written in plain digits',
    action: 'Write digits only: no sign, decimals, separators or hex.',
  },
  INTEGER_NOT_POSITIVE: {
    seen: ['row'],
    meaning: 'a number that must be 1 or more',
    action: 'Give 1 or more.',
  },
  INTEGER_TOO_LARGE: {
    seen: ['row'],
    meaning: 'a number too large to send safely in JSON',
    action: 'Check the value; no product or quantity is that large.',
  },
  INTERNAL: {
    seen: ['refusal'],
    exit: 1,
    meaning: 'an internal error: a bug',
    action: 'Report it with the log (stderr has the stack). Running the same command again is safe.',
  },
  INTERRUPTED: {
    seen: ['refusal'],
    exit: 'signal',
    meaning: 'a `--json` command was stopped by SIGTERM or SIGINT (exit 143 or 130) before its report',
    action: 'Run the same command again to finish; nothing is sent twice.',
  },
  JOB_DATA_MALFORMED: {
    seen: ['worker'],
    exit: 1,
    meaning: "a job's data is not of the shape its version says",
    action: 'The worker leaves the job in the queue and logs it; report it with the log.',
  },
  JOB_DATA_NEWER: {
    seen: ['worker'],
    exit: 1,
    meaning: 'a job written by a newer bulkorder (its data version or packed layout is unknown here)',
    action: 'Upgrade this worker; the job waits in the queue for a worker that reads it.',
  },
  JOB_FAILED: {
    seen: ['delivery'],
    meaning:
      'the job failed before the order was sent, outside the delivery logic: the workers holding it died more often than BULKORDER_MAX_STALLS allows, or an unexpected error',
    action: 'Dead-lettered with the error: fix its cause, then `bulkorder dead-letters retry`.',
  },
  JOURNAL_UNREADABLE: {
    seen: ['refusal'],
    exit: 2,
    meaning: 'the import journal beside the file cannot be read, or is not one',
    action: 'Make it readable, or move it away to import without it (README, "The import journal").',
  },
  JOURNAL_WRITE_FAILED: {
    seen: ['refusal'],
    exit: 5,
    meaning: 'the import journal beside the file could not be written (a full disk, a quota, an I/O error)',
    action:
      'Free space and run the same import again: nothing is sent twice (the message says whether anything was queued).',
  },
  JSON_INVALID: {
    seen: ['refusal'],
    exit: 3,
    meaning: 'the file is not the JSON shape its extension says (.json: an array; .ndjson: one object a line)',
    action: 'Name it .json or .ndjson as its content is, or pass --format.',
  },
  JSON_SYNTAX: {
    seen: ['row'],
    meaning: 'an element or line is not valid JSON',
    action: 'Fix the JSON of that element or line.',
  },
  LANGUAGE_CODE_INVALID: {
    seen: ['row'],
    meaning: 'not an ISO 639-1 two-letter language code',
    action: 'Write the two-letter code (nl, en, de).',
  },
  LEADING_ZEROS: {
    seen: ['note'],
    meaning: 'leading zeros of a number removed (00079 -> 79)',
    action: 'Nothing.',
  },
  LEDGER_LOST: {
    seen: ['refusal'],
    exit: 5,
    meaning: 'Redis forgot an earlier import of this file (restarted without persistence, flushed)',
    action:
      'Nothing was sent. `--trust-results` goes on from the last results file, `--force` sends again; see README, "The import journal".',
  },
  LINE_BREAKS_JOINED: {
    seen: ['note'],
    meaning: 'line breaks inside a text joined with ", "',
    action: 'Nothing.',
  },
  LOGIN_URL_AMBIGUOUS: {
    seen: ['refusal'],
    exit: 4,
    meaning: 'the login answer holds several URLs and none in the configured fields',
    action: 'Set BULKORDER_LOGIN_URL_FIELDS to the field that holds the login URL.',
  },
  LOGIN_URL_INVALID: {
    seen: ['refusal'],
    exit: 4,
    meaning: "the login answer's URL field holds no absolute http(s) URL",
    action: 'Check the answer (in the log) and BULKORDER_LOGIN_URL_FIELDS.',
  },
  LOGIN_URL_MISSING: {
    seen: ['refusal'],
    exit: 4,
    meaning: 'the login answer holds no URL',
    action: 'Check the answer (in the log) and BULKORDER_LOGIN_URL_FIELDS.',
  },
  MAPPING_INVALID: {
    seen: ['refusal'],
    exit: 2,
    meaning: 'the --map file is not a JSON object of header -> field, or names an unknown field',
    action: 'Write {"Header": "field"} with the fields the message lists ("" ignores a column).',
  },
  MAX_LINES_INVALID: {
    seen: ['refusal'],
    exit: 2,
    meaning: '--max-lines-per-order is not a whole number from 1 to 100000',
    action: 'Give a whole number from 1 to 100000.',
  },
  MAX_REJECTED_INVALID: {
    seen: ['refusal'],
    exit: 2,
    meaning: '--max-rejected is not a share from 0% to 100%',
    action: 'Give a share like 50%.',
  },
  NETWORK_ERROR: {
    seen: ['delivery'],
    meaning: 'a network failure of a kind not named here (the message has its own code)',
    action: 'Retried if the request had not left; held for review if it had.',
  },
  NETWORK_UNREACHABLE: {
    seen: ['delivery'],
    meaning: 'no network route to the API (ENETUNREACH); the request was never sent',
    action: 'Retried with backoff. Check the network.',
  },
  NOT_AN_ACCOUNT: {
    seen: ['row'],
    meaning: 'a JSON element is not an account object',
    action: 'Give one object per account.',
  },
  NOT_AN_ORDER: {
    seen: ['row'],
    meaning: 'a JSON element is not an object',
    action: 'Give one object per order.',
  },
  NO_ANSWER: {
    seen: ['delivery'],
    meaning: 'in a batch notification: orders that ended with no HTTP status and no code',
    action: 'Look them up with `dead-letters list --batch` or `review list --batch`; their records say why.',
  },
  NO_CONNECTION: {
    seen: ['worker'],
    meaning: 'the circuit breaker opened: requests cannot reach the API at all',
    action: 'Check the network and BULKORDER_BASE_URL; jobs wait without spending attempts and go on when it closes.',
  },
  OPEN_ACK_NOTE_MISSING: {
    seen: ['refusal'],
    exit: 2,
    meaning: '`open ack` without --note: an acknowledgement records why',
    action: 'Say why the item needs nothing more: `bulkorder open ack <id> --note "..."`.',
  },
  OPEN_ITEM_UNKNOWN: {
    seen: ['refusal'],
    exit: 2,
    meaning: '`open ack` named an id that is not open (closed meanwhile, acknowledged before, or mistyped)',
    action: 'Run `bulkorder open` for the ids that are open now.',
  },
  ORDER_NOT_SENT: {
    seen: ['row'],
    meaning: 'this row is fine, but another row of its order is not',
    action: "Fix the order's other rows (named in the rejects file); import the rejects file.",
  },
  ORDER_REF_MISSING: {
    seen: ['row'],
    meaning: 'orderRef is empty in a file that groups rows by orderRef',
    action: 'Give every row its orderRef.',
  },
  ORDER_REF_REUSED: {
    seen: ['row'],
    meaning: 'the orderRef was used before for an order with other content (delivered, held or in flight): not sent',
    action:
      'Give the new order a new orderRef; the message names the earlier batch and what differs. A dead letter may come back with new content.',
  },
  ORDER_TOO_MANY_LINES: {
    seen: ['row'],
    meaning: 'an order has more product lines than allowed',
    action: 'Split the order, or raise --max-lines-per-order (up to 100000).',
  },
  OUTCOME_UNKNOWN: {
    seen: ['delivery'],
    meaning: 'the order was being sent when its worker stopped: it may or may not have reached the API',
    action: 'Held for review: check the service, then `review resolve --delivered` or `review release`.',
  },
  OUTPUT_NOT_WRITABLE: {
    seen: ['refusal'],
    exit: 5,
    meaning:
      'a file bulkorder writes (journal, rejects, results, export, spill, drop folder, trail) is in a folder this user may not write (read-only, no permission)',
    action:
      'Make the folder writable (or choose another path: --out, --rejects, --results, TMPDIR) and run the same command again: nothing is sent twice.',
  },
  OUTPUT_PATH_INVALID: {
    seen: ['refusal'],
    exit: 2,
    meaning: "an output file's path cannot be a file: its folder is missing, or a part of it is a file",
    action: 'Choose another path (--out, --rejects, --results) or create the folder.',
  },
  PHONE_INVALID: {
    seen: ['row'],
    meaning: 'a phone number impossible for its country (wrong length or prefix)',
    action: 'Correct the number (+ and country code, then the national number).',
  },
  PHONE_NOT_INTERNATIONAL: {
    seen: ['row'],
    meaning: 'a phone number without + and country code',
    action: 'Write it as +31 6 ... (not 06 ... or 0031 6 ...).',
  },
  PHONE_UNVERIFIED: {
    seen: ['note', 'row'],
    meaning: 'a phone number possible for its country but not known to be in use (a note; refused with --strict-phone)',
    action: 'Check the number with the recipient.',
  },
  POSSIBLE_DUPLICATE: {
    seen: ['note'],
    meaning: 'delivered, but an earlier attempt was answered 5xx: the API may have stored it twice',
    action: 'Check those orders on the service (the batch counts them: possibleDuplicates).',
  },
  PRODUCTS_MERGED: {
    seen: ['note'],
    meaning:
      'one product on two lines of an order: sent as one line with the summed quantity (--strict-products refuses it)',
    action: 'Nothing, unless the two lines were meant as two orders.',
  },
  RECIPIENT_MISMATCH: {
    seen: ['row'],
    meaning: 'rows of one order disagree on the recipient',
    action: 'Make the rows of one order name the same recipient, or give them different orderRefs.',
  },
  RECORD_TOO_LARGE: {
    seen: ['row'],
    meaning: 'an element or line is longer than the record-size cap',
    action: 'Check that element; no order is that long.',
  },
  REDIS_CLUSTER_DOWN: {
    seen: ['refusal'],
    exit: 5,
    meaning:
      'a Redis Cluster did not serve a slot for longer than BULKORDER_REDIS_FAILOVER_MAX_MS (a failover that did not end); the message names the cluster state',
    action:
      'Check the nodes (`redis-cli -p <port> cluster nodes`): a master without a replica to take over must be restarted. Then run the same command again: nothing is queued or sent twice.',
  },
  REDIS_EVICTION_POLICY: {
    seen: ['refusal', 'worker'],
    exit: 5,
    meaning: 'Redis may evict keys: queued orders and ledger entries could vanish',
    action: 'Set maxmemory-policy to noeviction (`redis-cli config set maxmemory-policy noeviction` and redis.conf).',
  },
  REDIS_KEYS_VANISHED: {
    seen: ['refusal', 'worker'],
    exit: 5,
    meaning:
      'keys bulkorder wrote are gone from Redis (a ledger entry while its job exists, a batch record while it is followed): Redis evicted or lost them, and what was delivered before may be sent again',
    action:
      'Stop every importer and worker; set maxmemory-policy noeviction (and enough maxmemory), check persistence, then compare the results files with the API before re-running: the ledger no longer knows those orders.',
  },
  REDIS_NOT_PERSISTENT: {
    seen: ['refusal', 'worker'],
    exit: 5,
    meaning: 'Redis does not persist its data (production): a restart forgets what was delivered',
    action: 'Turn on AOF or RDB snapshots; BULKORDER_ALLOW_VOLATILE_REDIS=yes runs anyway.',
  },
  REDIS_NO_PERMISSION: {
    seen: ['refusal'],
    exit: 2,
    meaning: 'Redis refused a command or key to the user of REDIS_URL (ACL: NOPERM)',
    action:
      'Give the user the ACL README\'s "Redis permissions" lists (its key pattern must cover BULKORDER_REDIS_PREFIX), then run the same command again.',
  },
  REDIS_TLS: {
    seen: ['refusal'],
    exit: 2,
    meaning: "the TLS handshake with Redis failed: its certificate is not trusted, is another host's or expired",
    action:
      'Set BULKORDER_REDIS_TLS_CA to the CA that signed it, use a host name the certificate names, or renew it; the message says which.',
  },
  REDIS_UNAVAILABLE: {
    seen: ['refusal', 'delivery'],
    exit: 5,
    meaning: 'Redis does not answer, lost the connection, or is out of memory',
    action:
      'Start Redis (or give it memory) and run the same command again: what was done stays done. Workers wait for it.',
  },
  REDIS_UNVERIFIABLE: {
    seen: ['refusal', 'worker'],
    exit: 5,
    meaning:
      'Redis refuses this user CONFIG (and INFO), so eviction and persistence cannot be checked (production, or workers paused)',
    action:
      'Check the Redis yourself (noeviction, AOF) or grant +info +config|get; BULKORDER_ALLOW_UNVERIFIED_REDIS=yes runs production anyway, BULKORDER_REDIS_CHECK_UNVERIFIABLE=run trusts INFO.',
  },
  REJECTS_WRITE_FAILED: {
    seen: ['refusal'],
    exit: 5,
    meaning: 'the rejects file could not be written (a full disk, an I/O error)',
    action: 'Free space and run the same command again; no half-written file is left.',
  },
  REPLACEMENT_CHARACTER: {
    seen: ['row'],
    meaning: 'text holds "\uFFFD": it was damaged by a wrong encoding before it reached us',
    action: 'Export the file again from its source as "CSV UTF-8".',
  },
  RESOLVE_OUTCOME_MISSING: {
    seen: ['refusal'],
    exit: 2,
    meaning: '`review resolve` without --delivered',
    action: 'Pass --delivered if the order is on the service; to send it again use `review release`.',
  },
  RESPONSE_INCOMPLETE: {
    seen: ['delivery'],
    meaning: 'the answer was shorter than its Content-Length; the order may have been stored',
    action: 'Held for review: check the service, then resolve or release.',
  },
  RESULTS_FILE_UNREADABLE: {
    seen: ['refusal'],
    exit: 2,
    meaning: 'the results file named (or found beside the input) cannot be read as one',
    action: 'Move it away, or name another with --results.',
  },
  RESULTS_WRITE_FAILED: {
    seen: ['refusal'],
    exit: 5,
    meaning: 'the results file could not be written (a full disk, an I/O error)',
    action: 'Free space and run the same command again: it writes the results and sends nothing twice.',
  },
  SCHEDULE_NAME_INVALID: {
    seen: ['refusal'],
    exit: 2,
    meaning: 'a schedule name outside 1-64 letters, digits, ".", "_" or "-"',
    action: 'Choose another name.',
  },
  SCHEDULE_NOT_FOUND: {
    seen: ['refusal'],
    exit: 2,
    meaning: 'no schedule of that name in this environment',
    action: '`bulkorder schedule list` shows them.',
  },
  SELECTION_MISSING: {
    seen: ['refusal'],
    exit: 2,
    meaning: 'a dead-letters or review action with nothing chosen',
    action: 'Name keys, give a filter (--batch, --status, --code, --older-than, --newer-than), or pass --all.',
  },
  SERVER_FAILING: {
    seen: ['worker'],
    meaning: 'the circuit breaker opened: the API answers 5xx or not at all to most requests',
    action: 'Wait, or check the service; jobs wait without spending attempts and go on when it closes.',
  },
  SIMULATOR_FAULTS_INVALID: {
    seen: ['refusal'],
    exit: 2,
    meaning: 'a simulator fault option is out of range',
    action: 'Fix the option the message names (`bulkorder simulator --help`).',
  },
  SIMULATOR_LISTEN_FAILED: {
    seen: ['refusal'],
    exit: 2,
    meaning: 'the simulator cannot listen on that host and port',
    action: 'Choose another --port or --host.',
  },
  SIMULATOR_OPTION_INVALID: {
    seen: ['refusal'],
    exit: 2,
    meaning: 'a simulator option is out of range',
    action: 'Fix the option the message names.',
  },
  SIMULATOR_PROFILE_UNKNOWN: {
    seen: ['refusal'],
    exit: 2,
    meaning: 'no simulator answer profile of that name',
    action: 'Choose one of the profiles the message lists.',
  },
  SOCKET_CLOSED: {
    seen: ['delivery'],
    meaning: 'the connection closed under the request',
    action: 'Retried if the request had not left; held for review if it had.',
  },
  SOCKET_TIMEOUT: {
    seen: ['delivery'],
    meaning: 'the connection timed out (ETIMEDOUT)',
    action: 'Retried if the request had not left; held for review if it had.',
  },
  SOURCE_EMPTY: {
    seen: ['refusal'],
    meaning: 'a schedule fired and its source named no file (the export did not come)',
    action: 'Check the export; a schedule set with --allow-empty takes a night without a file as normal.',
  },
  SOURCE_INVALID: {
    seen: ['refusal'],
    exit: 2,
    meaning: "a schedule's --source is not an absolute path, or has wildcards before its last part",
    action: 'Give an absolute file, folder or folder/pattern-*.csv.',
  },
  SOURCE_NOT_FOUND: {
    seen: ['refusal'],
    exit: 2,
    meaning: "a schedule's --source (or its folder) does not exist",
    action: 'Give an existing file, folder or folder/pattern-*.csv.',
  },
  SOURCE_OTHER_TARGET: {
    seen: ['refusal'],
    exit: 2,
    meaning:
      "a schedule's source is inside the drop folder of another target (its .bulkorder-target.json names another environment, API or client)",
    action:
      'Give the schedule a source of its own; a file dropped for one API must reach that API only (refused at `schedule set` and at every firing).',
  },
  SOURCE_UNREADABLE: {
    seen: ['refusal'],
    exit: 3,
    meaning: "a schedule's source folder or file cannot be read when it fires",
    action: 'Check its permissions for the user the worker runs as.',
  },
  SPILL_WRITE_FAILED: {
    seen: ['refusal'],
    exit: 5,
    meaning: "a large file's temporary spill files could not be written (the temp folder is full, TMPDIR)",
    action:
      'Free space in the temp folder or point TMPDIR at a bigger one, and run the same command again; nothing of the file was queued.',
  },
  STATUS_INVALID: {
    seen: ['refusal'],
    exit: 2,
    meaning: '--status is not an HTTP status',
    action: "Give a status from 100 to 599, or 'none'.",
  },
  STREET_NUMBER_ADDITION: {
    seen: ['row'],
    meaning: 'a house number with an addition (12a); the API takes an integer',
    action: 'Write the number only; put the addition where the address allows it.',
  },
  THREADS_INVALID: {
    seen: ['refusal'],
    exit: 2,
    meaning: '--threads is not a whole number from 0 to 64',
    action: 'Give a whole number from 0 to 64.',
  },
  TLS_REJECTED: {
    seen: ['delivery'],
    meaning: "the API's TLS certificate was refused (expired, self-signed, wrong name); the request was never sent",
    action: "Retried with backoff; fix the certificate, or BULKORDER_BASE_URL's host name.",
  },
  TOKEN_ENDPOINT_UNAVAILABLE: {
    seen: ['refusal', 'delivery'],
    exit: 5,
    meaning: 'no access token after several attempts: the token endpoint is down or unreachable',
    action: 'Check BULKORDER_AUTH_URL and the service; orders wait and are retried.',
  },
  TOKEN_REFRESH_FAILED: {
    seen: ['refusal', 'delivery'],
    exit: 5,
    meaning: 'another process refreshing the shared access token failed, and this one waited for it',
    action: "Read that process's log for the cause; the next attempt tries again.",
  },
  TOKEN_REFUSED: {
    seen: ['refusal', 'delivery'],
    exit: 2,
    meaning: 'the token endpoint refused our client id and secret',
    action: 'Fix BULKORDER_*_CLIENT_ID and _SECRET; `bulkorder token` checks them.',
  },
  TOKEN_WAIT_TIMEOUT: {
    seen: ['refusal', 'delivery'],
    exit: 5,
    meaning: 'another process held the token refresh too long',
    action: 'Retried; check that process and the token endpoint if it lasts.',
  },
  TOO_MANY_REJECTED: {
    seen: ['refusal'],
    exit: 3,
    meaning: 'most of the first 10,000 rows are rejected (more than --max-rejected, 50%)',
    action:
      'Nothing was queued. Fix the export (wrong file, columns or mapping?), or pass --max-rejected 100% to import the valid rows.',
  },
  TRAIL_WRITE_FAILED: {
    seen: ['refusal'],
    exit: 5,
    meaning: 'an upload or scheduled import could not put its input, rejects or results into the results folder',
    action:
      'Nothing was imported. Set BULKORDER_RESULTS_DIR to a folder this process can write (and with space), or make this one writable.',
  },

  TRIMMED: {
    seen: ['note'],
    meaning: 'spaces around a value removed',
    action: 'Nothing.',
  },
  TZ_INVALID: {
    seen: ['refusal'],
    exit: 2,
    meaning: '--tz is not a time zone',
    action: 'Give an IANA name such as Europe/Amsterdam or UTC.',
  },
  UNKNOWN_FIELD: {
    seen: ['row'],
    meaning: 'a JSON order has a field the API order shape does not have',
    action: "Remove the field, or correct its name to the API's.",
  },
  UPLOAD_NAME_INVALID: {
    seen: ['refusal'],
    http: 400,
    meaning:
      "a dashboard upload's name cannot name a file (., .., CON, a path, control characters, no extension, too long)",
    action: 'Rename the file (orders.csv, orders.json) and upload it again.',
  },
  UPLOAD_WRITE_FAILED: {
    seen: ['refusal'],
    exit: 5,
    http: 507,
    meaning: 'a dashboard upload could not be stored in the upload spool (the temp folder is full, TMPDIR)',
    action: 'Free space in the temp folder (or point TMPDIR at a bigger one) and upload again; nothing was imported.',
  },
  USAGE: {
    seen: ['refusal'],
    exit: 2,
    meaning: "a flag's value is out of its range or of the wrong form",
    action: 'Fix the flag the message names; every command has --help.',
  },
  WATCH_FOLDER_INVALID: {
    seen: ['refusal'],
    exit: 2,
    meaning: "a drop folder's inbox, processing, done or failed is a link or a file",
    action: 'Make it a folder inside the drop folder, or remove it (the watcher makes it).',
  },
  WATCH_FOLDER_OTHER_TARGET: {
    seen: ['refusal'],
    exit: 2,
    meaning: 'the drop folder serves another target (API, environment or kind)',
    action: 'Give each target its own drop folder; the message says how to free this one.',
  },
  WATCH_HARD_LINK: {
    seen: ['refusal'],
    meaning: 'a dropped file is a hard link to a file elsewhere (moved to failed/)',
    action: 'Drop a copy of the file.',
  },
  WATCH_NOT_A_FILE: {
    seen: ['refusal'],
    meaning: 'a dropped entry is not a regular file (moved to failed/)',
    action: 'Drop the file itself.',
  },
  WATCH_SYMLINK: {
    seen: ['refusal'],
    meaning: 'a dropped file is a symbolic link (moved to failed/)',
    action: 'Drop the file itself, not a link to it.',
  },
  WATCH_TOO_LARGE: {
    seen: ['refusal'],
    meaning: 'a dropped file is larger than the watcher takes (watch --max-size; moved to failed/)',
    action: 'Split the file or import it with `bulkorder import`, or raise --max-size.',
  },
  WATCH_WRITE_FAILED: {
    seen: ['refusal'],
    exit: 5,
    meaning:
      'the drop folder could not be written: a file not moved to processing/, done/ or failed/, or its summary not written',
    action:
      'Free space there (or make it writable); the watcher tries the file again, and what was queued is not sent twice.',
  },
  WEBHOOK_ADDRESS_REFUSED: {
    seen: ['worker'],
    meaning:
      'a notification was not sent: its webhook resolves to a loopback, link-local, private or cloud metadata address',
    action:
      'Point BULKORDER_NOTIFY_URLS at a public receiver, or allow it with BULKORDER_NOTIFY_ALLOW_PRIVATE (its host name, a network, or *).',
  },
  WORKER_WEDGED: {
    seen: ['worker'],
    meaning:
      "a worker took no job while jobs waited for BULKORDER_WEDGE_CHECKS looks in a row (BullMQ's blocking wait went deaf, e.g. after a Redis Cluster failover): it got a new BullMQ worker and takes jobs again",
    action:
      'Nothing: the worker healed itself (bulkorder_worker_wedge_recoveries_total counts it). If it repeats without a failover, check the network between the worker and Redis.',
  },
} as const satisfies Readonly<Record<string, CodeEntry>>;

/** Every code of the catalogue. */
export type ErrorCode = keyof typeof ERROR_CODES;
type Entry<C extends ErrorCode> = (typeof ERROR_CODES)[C];

/** The codes a command stops with exit code E: what an error class of that exit code may carry. */
export type CodeOfExit<E extends ExitCode> = { [C in ErrorCode]: Entry<C> extends { exit: E } ? C : never }[ErrorCode];
/** The codes met in one place. */
export type CodeSeen<P extends CodePlace> = {
  [C in ErrorCode]: P extends Entry<C>['seen'][number] ? C : never;
}[ErrorCode];
/** A reason a row or record is rejected (RowError.code). */
export type RowErrorCode = CodeSeen<'row'>;
/** A note on an accepted row (rowNote). */
export type NoteCode = CodeSeen<'note'>;

/**
 * Codes of a kind, with a pattern for the part that varies: `HTTP_<status>` when the API answers
 * an error status without a code of its own. Listed in docs/errors.md like the codes above.
 */
export const CODE_PATTERNS = {
  'HTTP_<status>': {
    seen: ['delivery'],
    meaning:
      'the API answered this HTTP status and its body names no error code (BULKORDER_ERROR_CODE_FIELDS: where we look)',
    action:
      "Read the dead letter's message and body (`dead-letters show`); 5xx are retried, other 4xx dead-lettered at once.",
  },
} as const satisfies Readonly<Record<string, CodeEntry>>;

declare const passedOnBrand: unique symbol;
/**
 * A code passed on as it came, unchecked here: an outcome's (the remote API's own, from its answer
 * body, or one of ours that classifyOutcome or the token provider gave it), or one another process
 * stored in Redis for this one to rethrow. Error classes take it beside the catalogue's codes.
 */
export type PassedOnCode = string & { readonly [passedOnBrand]: true };

/** Marks a code as passed on (see PassedOnCode). */
export function passedOn(code: string): PassedOnCode {
  return code as PassedOnCode;
}

export function isErrorCode(code: string): code is ErrorCode {
  return Object.hasOwn(ERROR_CODES, code);
}

/** The one-line meaning of a code (undefined for a code not ours: the API's own, a pattern's). */
export function meaningOf(code: string): string | undefined {
  return isErrorCode(code) ? ERROR_CODES[code].meaning : undefined;
}

/** The exit code a command stops with for a code; undefined when the catalogue gives none (or the code is not ours). */
export function exitCodeOf(code: string): ExitCode | undefined {
  if (!isErrorCode(code)) return undefined;
  const entry: CodeEntry = ERROR_CODES[code];
  return typeof entry.exit === 'number' ? entry.exit : undefined;
}

/** The HTTP status a page answers a code with, when the catalogue names one. */
export function httpStatusOf(code: string): number | undefined {
  if (!isErrorCode(code)) return undefined;
  const entry: CodeEntry = ERROR_CODES[code];
  return entry.http;
}
