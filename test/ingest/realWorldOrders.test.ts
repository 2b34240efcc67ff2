import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HEADER, readAll, rejected, row, runCli, tempDir, valid } from './ingestHelpers.js';

let tmp: Awaited<ReturnType<typeof tempDir>>;
beforeEach(async () => {
  tmp = await tempDir();
});
afterEach(async () => {
  await tmp.cleanup();
});

/** Recipients as real shops export them: many countries, numbers newer than any metadata, address line 2, padded numbers. */
const PEOPLE: Record<string, string>[] = [
  {
    firstName: 'Noa',
    lastName: 'Levi',
    street: 'Rothschild Blvd',
    streetNumber: '12',
    postalCode: '6688101',
    city: 'Tel Aviv',
    countryCode: 'IL',
    languageCode: 'en',
    telephoneNumber: '+972501234511',
  },
  {
    firstName: 'Oliver',
    lastName: 'Smith',
    street: 'Baker Street',
    streetNumber: '221',
    postalCode: 'NW1 6XE',
    city: 'London',
    countryCode: 'GB',
    languageCode: 'en',
    telephoneNumber: '+447700900016',
  },
  {
    firstName: 'Camille',
    lastName: 'Durand',
    street: 'Rue de la Paix\nBâtiment B',
    streetNumber: '3',
    postalCode: '75002',
    city: 'Paris',
    countryCode: 'FR',
    languageCode: 'fr',
    telephoneNumber: '+33 6 12 34 56 78',
  },
  {
    firstName: 'Jan',
    lastName: 'de Vries',
    street: 'Keizersgracht',
    streetNumber: '00079',
    postalCode: '1015 CX',
    city: 'Amsterdam',
    countryCode: 'NL',
    languageCode: 'nl',
    telephoneNumber: '+31612345678',
  },
  {
    firstName: ' Lotte ',
    lastName: 'Peeters',
    street: 'Meir',
    streetNumber: '50',
    postalCode: '2000',
    city: 'Antwerpen',
    countryCode: 'be',
    languageCode: 'NL',
    telephoneNumber: '+32 470 12 34 56',
  },
  {
    firstName: 'Jürgen',
    lastName: 'Müller',
    street: 'Friedrichstraße',
    streetNumber: '43',
    postalCode: '10117',
    city: 'Berlin',
    countryCode: 'DE',
    languageCode: 'de',
    telephoneNumber: '+49 151 23456789',
  },
  {
    firstName: 'Anne-Marie',
    lastName: "O'Brien",
    street: 'Grafton Street',
    streetNumber: '7',
    postalCode: 'D02 VF65',
    city: 'Dublin',
    countryCode: 'IE',
    languageCode: 'en',
    telephoneNumber: '+353 85 123 4567',
  },
  {
    firstName: 'Åsa',
    lastName: 'Lindqvist',
    street: 'Drottninggatan',
    streetNumber: '0012',
    postalCode: '111 51',
    city: 'Stockholm',
    countryCode: 'SE',
    languageCode: 'sv',
    telephoneNumber: '+46 70 123 45 67',
  },
];

function orders(count: number): string {
  const lines = [HEADER];
  for (let i = 0; i < count; i++) {
    const person = PEOPLE[i % PEOPLE.length]!;
    lines.push(
      row({
        ...person,
        orderRef: `RW-${i + 1}`,
        email: `customer${i + 1}@example.com`,
        productId: String(5001 + (i % 3)),
        quantity: String(1 + (i % 2)),
      }),
    );
  }
  return lines.join('\n') + '\n';
}

describe('real-world exports', () => {
  it('accepts all 40 valid orders: possible-but-unknown phones, address line 2, padded street numbers, spaces, lower case', async () => {
    const file = await tmp.file('shop-export.csv', orders(40));
    const items = await readAll(file);
    expect(rejected(items).map((r) => r.errors.map((e) => e.code))).toEqual([]);
    expect(valid(items)).toHaveLength(40);
    const paris = valid(items).find((o) => o.orderRef === 'RW-3')!;
    expect(paris.payload.recipient.address.street).toBe('Rue de la Paix, Bâtiment B');
    const amsterdam = valid(items).find((o) => o.orderRef === 'RW-4')!;
    expect(amsterdam.payload.recipient.address.streetNumber).toBe(79);
    const notes = valid(items).flatMap((o) => o.notes);
    for (const code of ['PHONE_UNVERIFIED', 'LINE_BREAKS_JOINED', 'LEADING_ZEROS', 'TRIMMED'])
      expect(notes.join('\n')).toContain(` ${code}: `);
  });

  it(
    'shows PHONE_UNVERIFIED in the report; --strict-phone refuses those orders instead',
    { timeout: 90_000 },
    async () => {
      const file = await tmp.file('shop-export.csv', orders(40));
      const lenient = await runCli(['validate', file]);
      expect(lenient.stderr).toBe('');
      expect(lenient.code).toBe(0);
      expect(lenient.stdout).toMatch(/valid\s+40/);
      expect(lenient.stdout).toMatch(/10\s+PHONE_UNVERIFIED/); // 5 Israeli and 5 British orders
      const strict = await runCli([
        'validate',
        file,
        '--strict-phone',
        '--json',
        '--out',
        `${tmp.dir}/strict.rejects.csv`,
      ]);
      expect(strict.code).toBe(4);
      const report = JSON.parse(strict.stdout) as {
        valid: number;
        rejected: number;
        errorKinds: { code: string; count: number }[];
      };
      expect(report).toMatchObject({ valid: 30, rejected: 10 });
      expect(report.errorKinds).toEqual([expect.objectContaining({ code: 'PHONE_UNVERIFIED', count: 10 })]);
    },
  );

  it('still refuses what cannot be right: impossible numbers, formulas, tabs', async () => {
    const file = await tmp.file(
      'bad.csv',
      [
        HEADER,
        row({ orderRef: 'A', telephoneNumber: '+316123' }),
        row({ orderRef: 'B', firstName: '=HYPERLINK("http://evil.example","Jan")' }),
        row({ orderRef: 'C', city: 'Amster\tdam' }),
      ].join('\n') + '\n',
    );
    const codes = rejected(await readAll(file))
      .flatMap((r) => r.errors.map((e) => e.code))
      .sort();
    expect(codes).toEqual(['CONTROL_CHARACTER', 'FORMULA_TEXT', 'PHONE_INVALID']);
  });
});
