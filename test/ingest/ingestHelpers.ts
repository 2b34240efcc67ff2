import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openOrderSource, type IngestOptions } from '../../src/ingest/openOrderSource.js';
import type { IngestItem, RejectedRecord, ValidOrder } from '../../src/ingest/types.js';

/** The default header, in order. */
export const HEADER =
  'orderRef,businessCustomerId,firstName,lastName,street,streetNumber,postalCode,city,countryCode,languageCode,email,telephoneNumber,productId,quantity';

/** A valid row; `over` replaces fields by name. */
export function row(over: Record<string, string> = {}): string {
  const base: Record<string, string> = {
    orderRef: 'T-1',
    businessCustomerId: '1001',
    firstName: 'Jan',
    lastName: 'de Vries',
    street: 'Keizersgracht',
    streetNumber: '112',
    postalCode: '1015 CX',
    city: 'Amsterdam',
    countryCode: 'NL',
    languageCode: 'nl',
    email: 'jan.devries@example.nl',
    telephoneNumber: '+31612345678',
    productId: '5001',
    quantity: '1',
  };
  return HEADER.split(',')
    .map((field) => over[field] ?? base[field] ?? '')
    .map((value) => (/[",\n\r]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value))
    .join(',');
}

/** A fresh temp folder; remove it with `cleanup`. */
export async function tempDir(): Promise<{
  dir: string;
  file: (name: string, content: string | Buffer) => Promise<string>;
  cleanup: () => Promise<void>;
}> {
  const dir = await mkdtemp(join(tmpdir(), 'bulkorder-test-'));
  return {
    dir,
    file: async (name, content) => {
      const path = join(dir, name);
      await writeFile(path, content);
      return path;
    },
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}

/** Reads every item of a file. */
export async function readAll(file: string, options: IngestOptions = {}): Promise<IngestItem[]> {
  const source = await openOrderSource(file, options);
  const items: IngestItem[] = [];
  for await (const item of source.items()) items.push(item);
  return items;
}

export function valid(items: readonly IngestItem[]): ValidOrder[] {
  return items.filter((item): item is ValidOrder => item.kind === 'valid');
}

export function rejected(items: readonly IngestItem[]): RejectedRecord[] {
  return items.filter((item): item is RejectedRecord => item.kind === 'rejected');
}

/** Error codes of all rejected items, sorted, as `line:code:column`. */
export function errorList(items: readonly IngestItem[]): string[] {
  return rejected(items)
    .flatMap((item) => item.errors.map((e) => `${e.line}:${e.code}:${e.column ?? ''}`))
    .sort();
}

export { runCli } from '../helpers/runCli.js';
