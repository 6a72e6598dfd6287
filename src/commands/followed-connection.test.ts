import { describe, expect, it } from 'vitest';
import { HttpError, NetworkError } from '../client/errors.js';
import { type Client, createClient } from '../client/http-client.js';
import { FollowedConnection } from './followed-connection.js';

const target = { method: 'POST', path: '/bc/v1/events/queue' };
const refused = () => new NetworkError('cannot reach: ECONNREFUSED', 'ECONNREFUSED', target, undefined);

function connection(endpoint: string, closed: string[]) {
  const client = createClient({ endpoint, apiKey: 'k', projectId: 'p' });
  return {
    client,
    close: async () => {
      closed.push(endpoint);
      await client.close();
    },
  };
}

describe('FollowedConnection', () => {
  it('asks once for the moved service while calls fail together, and makes each call there', async () => {
    const closed: string[] = [];
    const old = connection('http://127.0.0.1:1', closed);
    const moved = connection('http://127.0.0.1:2', closed);
    let asked = 0;
    const followed = new FollowedConnection(old, async () => {
      asked++;
      return moved;
    });
    const send = (n: number) =>
      followed.call(async (c: Client) => {
        if (c === old.client) throw refused();
        return `${n} via ${c.endpoint}`;
      });
    await expect(Promise.all([send(1), send(2), send(3)])).resolves.toEqual([
      '1 via http://127.0.0.1:2',
      '2 via http://127.0.0.1:2',
      '3 via http://127.0.0.1:2',
    ]);
    expect(asked).toBe(1);
    // Later calls go straight to the new one.
    await expect(send(4)).resolves.toBe('4 via http://127.0.0.1:2');
    expect(asked).toBe(1);
    await followed.close();
    expect(closed).toEqual(['http://127.0.0.1:2']);
    await old.close();
  });

  it("keeps a call's own failure when no service moved, or when it was not the network's", async () => {
    const closed: string[] = [];
    const only = connection('http://127.0.0.1:1', closed);
    let asked = 0;
    const followed = new FollowedConnection(only, async () => {
      asked++;
      return undefined;
    });
    const error = refused();
    await expect(
      followed.call(async () => {
        throw error;
      }),
    ).rejects.toBe(error);
    expect(asked).toBe(1);
    const refusal = new HttpError({ status: 400, message: 'invalid' }, target);
    await expect(
      followed.call(async () => {
        throw refusal;
      }),
    ).rejects.toBe(refusal);
    expect(asked).toBe(1);
    await followed.close();
    expect(closed).toEqual([]);
    await only.close();
  });
});
