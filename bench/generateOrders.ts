/**
 * A seeded generator of realistic gift-order CSV for benchmarks: Dutch, Belgian and German
 * recipients with valid phone numbers, some orders with several product lines whose rows are
 * spread over the file (not adjacent), and optionally a share of typical mistakes.
 *
 *   npx tsx bench/generateOrders.ts <rows> <path> [--seed 1] [--multi 0.2] [--spread 500] [--errors 0]
 *
 * Streams to disk with backpressure: memory does not grow with the number of rows.
 * The same seed and options always produce the same file.
 */
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { realpathSync } from 'node:fs';

/** Options of generateOrders; every field has a default. */
export interface GenerateOptions {
  /** Data rows to write (the header comes on top). */
  rows: number;
  /** PRNG seed; default 1. */
  seed?: number;
  /** Share of orders with 2-4 product lines; default 0.2. */
  multiLineShare?: number;
  /** Furthest distance, in rows, between the lines of one order; default 500. */
  spread?: number;
  /** Share of rows with a typical mistake (bad quantity, national phone number, ...); default 0. */
  errorShare?: number;
  /** Prefix of the orderRefs; default `BENCH-<seed>`. */
  refPrefix?: string;
}

/** What was written. */
export interface GenerateResult {
  rows: number;
  orders: number;
  bytes: number;
}

export const HEADER = [
  'orderRef',
  'businessCustomerId',
  'firstName',
  'lastName',
  'street',
  'streetNumber',
  'postalCode',
  'city',
  'countryCode',
  'languageCode',
  'email',
  'telephoneNumber',
  'productId',
  'quantity',
];

interface Place {
  country: 'NL' | 'BE' | 'DE';
  language: string;
  city: string;
  postal: () => string;
  streets: readonly string[];
}

const FIRST = {
  NL: [
    'Jan',
    'Sanne',
    'Daan',
    'Emma',
    'Lucas',
    'Julia',
    'Bram',
    'Lotte',
    'Thijs',
    'Fleur',
    'Sem',
    'Tess',
    'Noah',
    'Zoë',
    'Ruben',
    'Iris',
  ],
  BE: ['Lien', 'Wout', 'Noor', 'Arne', 'Elise', 'Camille', 'Louis', 'Lars', 'Fien', 'Jules', 'Mila', 'Victor'],
  DE: ['Lukas', 'Anna', 'Felix', 'Marie', 'Jonas', 'Sophie', 'Leon', 'Lea', 'Paul', 'Hannah', 'Jürgen', 'Frieda'],
} as const;
const LAST = {
  NL: [
    'de Vries',
    'Bakker',
    'Visser',
    'de Jong',
    'van Dijk',
    'Smit',
    'Meijer',
    'Mulder',
    'de Boer',
    'Vos',
    'Jansen',
    'van den Berg',
    "'t Hart",
  ],
  BE: ['Peeters', 'Janssens', 'Maes', 'Jacobs', 'Willems', 'Dubois', 'Lambert', 'Claes', 'Goossens', 'Wouters'],
  DE: ['Müller', 'Schmidt', 'Schneider', 'Fischer', 'Weber', 'Meyer', 'Wagner', 'Becker', 'Hoffmann', 'Groß'],
} as const;

export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Yields the data rows (cells as text) one by one. */
export function* orderRows(options: GenerateOptions): Generator<string[]> {
  const random = mulberry32(options.seed ?? 1);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  const digits = (n: number): string => Array.from({ length: n }, () => Math.floor(random() * 10)).join('');
  const letters = (n: number): string =>
    Array.from({ length: n }, () => 'ABCDEGHJKLNPRSTVXZ'[Math.floor(random() * 18)]).join('');
  const places: Place[] = [
    {
      country: 'NL',
      language: 'nl',
      city: 'Amsterdam',
      postal: () => `10${digits(2)} ${letters(2)}`,
      streets: ['Keizersgracht', 'Prinsengracht', 'Overtoom', 'Damrak'],
    },
    {
      country: 'NL',
      language: 'nl',
      city: 'Utrecht',
      postal: () => `35${digits(2)} ${letters(2)}`,
      streets: ['Oudegracht', 'Biltstraat', 'Amsterdamsestraatweg'],
    },
    {
      country: 'NL',
      language: 'nl',
      city: 'Rotterdam',
      postal: () => `30${digits(2)} ${letters(2)}`,
      streets: ['Coolsingel', 'Hoogstraat', 'Witte de Withstraat'],
    },
    {
      country: 'NL',
      language: 'nl',
      city: 'Groningen',
      postal: () => `97${digits(2)} ${letters(2)}`,
      streets: ['Vismarkt', 'Herestraat', 'Oosterstraat'],
    },
    {
      country: 'BE',
      language: 'nl',
      city: 'Antwerpen',
      postal: () => '2000',
      streets: ['Meir', 'Groenplaats', 'Kammenstraat'],
    },
    {
      country: 'BE',
      language: 'nl',
      city: 'Gent',
      postal: () => '9000',
      streets: ['Korenmarkt', 'Veldstraat', 'Vrijdagmarkt'],
    },
    {
      country: 'BE',
      language: 'fr',
      city: 'Liège',
      postal: () => '4000',
      streets: ['Rue de la Cathédrale', 'Boulevard de la Sauvenière'],
    },
    {
      country: 'DE',
      language: 'de',
      city: 'Köln',
      postal: () => `506${digits(2)}`,
      streets: ['Schildergasse', 'Hohe Straße', 'Ehrenstraße'],
    },
    {
      country: 'DE',
      language: 'de',
      city: 'Hamburg',
      postal: () => `200${digits(2)}`,
      streets: ['Mönckebergstraße', 'Spitalerstraße', 'Jungfernstieg'],
    },
    {
      country: 'DE',
      language: 'de',
      city: 'München',
      postal: () => `803${digits(2)}`,
      streets: ['Kaufingerstraße', 'Sendlinger Straße', 'Leopoldstraße'],
    },
  ];
  // Ranges chosen so libphonenumber's full metadata calls every generated number valid.
  const phone = (country: Place['country']): string =>
    country === 'NL'
      ? `+316${1 + Math.floor(random() * 5)}${digits(7)}`
      : country === 'BE'
        ? `+3247${digits(7)}`
        : `+49151${digits(8)}`;

  const multi = options.multiLineShare ?? 0.2;
  const spread = Math.max(1, options.spread ?? 500);
  const errorShare = options.errorShare ?? 0;
  const prefix = options.refPrefix ?? `BENCH-${options.seed ?? 1}`;
  const pending = new Map<number, string[][]>(); // row index -> later lines of earlier orders
  let pendingCount = 0;
  let overdue: string[][] = [];
  let orders = 0;

  for (let index = 0; index < options.rows; index++) {
    const due = pending.get(index);
    if (due !== undefined) {
      pending.delete(index);
      overdue = overdue.concat(due);
    }
    const room = options.rows - index - pendingCount;
    if (overdue.length === 0 && room <= 0) {
      // Every remaining position is promised to a later line: take the earliest one now.
      const earliest = Math.min(...pending.keys());
      overdue = pending.get(earliest)!;
      pending.delete(earliest);
    }
    const later = overdue.shift();
    if (later !== undefined) {
      pendingCount--;
      yield later;
      continue;
    }
    const lines = random() < multi ? Math.min(room, 2 + Math.floor(random() * 3)) : 1;
    const place = pick(places);
    const first = pick(FIRST[place.country]);
    const last = pick(LAST[place.country]);
    const email =
      `${first}.${last}`
        .toLowerCase()
        .normalize('NFD')
        .replace(/[^a-z.]/g, '') + `${orders % 1000}@example.${place.country.toLowerCase()}`;
    const recipient = [
      first,
      last,
      pick(place.streets),
      String(1 + Math.floor(random() * 250)),
      place.postal(),
      place.city,
      place.country,
      place.language,
      email,
      phone(place.country),
    ];
    const ref = `${prefix}-${String(++orders).padStart(8, '0')}`;
    const customer = String(1001 + Math.floor(random() * 10));
    const products = new Set<number>();
    while (products.size < lines) products.add(5001 + Math.floor(random() * 50));
    const rows = [...products].map((product) => [
      ref,
      customer,
      ...recipient,
      String(product),
      String(1 + Math.floor(random() * 3)),
    ]);
    if (errorShare > 0 && random() < errorShare) spoil(rows[0]!, random);
    yield rows[0]!;
    for (const row of rows.slice(1)) {
      const at = index + 1 + Math.floor(random() * spread);
      pending.set(at, [...(pending.get(at) ?? []), row]);
      pendingCount++;
    }
  }
}

/** One typical mistake, in place. */
function spoil(row: string[], random: () => number): void {
  const kind = Math.floor(random() * 4);
  if (kind === 0) row[13] = '1.5';
  else if (kind === 1) row[11] = row[11]!.replace(/^\+31/, '0').replace(/^\+32/, '0').replace(/^\+49/, '0');
  else if (kind === 2) row[10] = row[10]!.replace('@', ' at ');
  else row[5] = `${row[5]}a`;
}

function csvCell(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

/** Writes `options.rows` data rows to `path` as CSV (comma, LF, UTF-8). */
export async function generateOrders(path: string, options: GenerateOptions): Promise<GenerateResult> {
  const out = createWriteStream(path);
  let bytes = 0;
  let rows = 0;
  let batch: string[] = [HEADER.join(',')];
  const flush = async (): Promise<void> => {
    const text = batch.join('\n') + '\n';
    batch = [];
    bytes += Buffer.byteLength(text);
    if (!out.write(text)) await once(out, 'drain');
  };
  let orders = 0;
  for (const row of orderRows(options)) {
    rows++;
    // Orders are numbered in the order their first line is written.
    orders = Math.max(orders, Number(row[0]!.slice(-8)));
    batch.push(row.map(csvCell).join(','));
    if (batch.length >= 1000) await flush();
  }
  await flush();
  out.end();
  await once(out, 'finish');
  return { rows, orders, bytes };
}

if (process.argv[1] !== undefined && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [rowsArg, path] = process.argv.slice(2);
  const flag = (name: string, fallback: number): number => {
    const at = process.argv.indexOf(`--${name}`);
    return at === -1 ? fallback : Number(process.argv[at + 1]);
  };
  if (rowsArg === undefined || path === undefined || !(Number(rowsArg) >= 0)) {
    process.stderr.write(
      'usage: npx tsx bench/generateOrders.ts <rows> <path> [--seed 1] [--multi 0.2] [--spread 500] [--errors 0]\n',
    );
    process.exitCode = 2;
  } else {
    const result = await generateOrders(path, {
      rows: Number(rowsArg),
      seed: flag('seed', 1),
      multiLineShare: flag('multi', 0.2),
      spread: flag('spread', 500),
      errorShare: flag('errors', 0),
    });
    process.stdout.write(
      `${path}: ${result.rows} rows, ${result.orders} orders, ${(result.bytes / 1024 / 1024).toFixed(1)} MiB\n`,
    );
  }
}
