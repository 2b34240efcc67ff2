/** HTML that is already safe: made by {@link h} or {@link raw}, inserted as is. */
export class Safe {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

const ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Escapes text for HTML content and quoted attribute values. */
function escapeHtml(text: string): string {
  // eslint-disable-next-line @typescript-eslint/no-non-null-assertion -- the regex matches only ESCAPES' keys
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

/** Marks trusted markup (constants of this module's callers only, never data). */
export function raw(markup: string): Safe {
  return new Safe(markup);
}

/**
 * Tagged template for server-rendered pages: every interpolated value is escaped unless it is
 * {@link Safe} (another `h` result); arrays are joined; undefined, null and false render nothing.
 */
export function h(strings: TemplateStringsArray, ...values: unknown[]): Safe {
  // A template has one string more than values: the reduce starts at strings[0] and adds value i - 1 before string i.
  return new Safe(strings.reduce((out, text, i) => out + render(values[i - 1]) + text));
}

function render(value: unknown): string {
  if (value === undefined || value === null || value === false) return '';
  if (value instanceof Safe) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(String(value));
}
