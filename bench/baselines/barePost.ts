/**
 * The bare baselines' posting loop: `concurrency` loops over one undici Pool of `concurrency`
 * connections, one token refreshed when 99% of its lifetime has passed (as the product does), a
 * 401 in flight answered by one fresh token and one resend. No Redis, no queue, no ledger.
 */
import { Pool } from 'undici';

export interface PostFigures {
  orders: number;
  failed: number;
  statuses: Record<number, number>;
  reauthorized: number;
}

export async function postAll(url: string, bodies: readonly string[], concurrency: number): Promise<PostFigures> {
  const pool = new Pool(url, { connections: concurrency, pipelining: 1 });
  let token: { value: string; refreshAt: number } | undefined;
  let fetching: Promise<string> | undefined;
  async function fetchToken(): Promise<string> {
    const answer = await pool.request({
      path: '/oauth2/token',
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: 'sim-business',
        client_secret: 'sim-business-secret',
      }).toString(),
    });
    const { access_token: value, expires_in: lifetime } = (await answer.body.json()) as {
      access_token: string;
      expires_in: number;
    };
    token = { value, refreshAt: Date.now() + lifetime * 990 };
    return value;
  }
  function currentToken(): string | Promise<string> {
    if (token !== undefined && Date.now() < token.refreshAt) return token.value;
    fetching ??= fetchToken().finally(() => (fetching = undefined));
    return fetching;
  }

  let next = 0;
  const figures: PostFigures = { orders: bodies.length, failed: 0, statuses: {}, reauthorized: 0 };
  async function post(body: string): Promise<number> {
    const bearer = await currentToken();
    const answer = await pool.request({
      path: '/business-api/orders',
      method: 'POST',
      headers: {
        authorization: `Bearer ${bearer}`,
        'user-agent': 'Bench-BulkorderBench',
        'content-type': 'application/json',
      },
      body,
    });
    await answer.body.json();
    // A token can expire in flight (5 s lifetimes): drop it and fetch again, as the product does.
    if (answer.statusCode === 401 && token?.value === bearer) token = undefined;
    return answer.statusCode;
  }
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < bodies.length) {
        const body = bodies[next++]!;
        let status = await post(body);
        if (status === 401) {
          figures.reauthorized++;
          status = await post(body);
        }
        if (status !== 201) {
          figures.failed++;
          figures.statuses[status] = (figures.statuses[status] ?? 0) + 1;
        }
      }
    }),
  );
  await pool.close();
  return figures;
}
