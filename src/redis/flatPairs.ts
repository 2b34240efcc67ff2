/** The pairs of a flat Redis reply (`HGETALL`/`HSCAN`/`ZRANGE WITHSCORES`: key, value, key, value...); an odd last item is dropped. */
export function* flatPairs(flat: readonly string[]): Generator<[string, string]> {
  let key: string | undefined;
  for (const item of flat) {
    if (key === undefined) key = item;
    else {
      yield [key, item];
      key = undefined;
    }
  }
}
