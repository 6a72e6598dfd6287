import { aliasBodySchema, identifyBodySchema, userRecordSchema } from '../../shared/users.js';
import { route } from '../http/route.js';
import { aliasUser, identifyUser, userRecord } from '../identity/identity.js';
import type { Database } from '../store/database.js';

export function userRoutes(db: Database) {
  return [
    route({
      method: 'POST',
      url: '/bc/v1/user/identify',
      tag: 'User',
      summary: 'Create a user or device, or merge traits into an existing one',
      body: identifyBodySchema,
      response: userRecordSchema,
      handler: ({ tenant, body }) =>
        db.write(async (tx) => userRecord(tx, tenant, await identifyUser(tx, tenant, body, new Date()))),
    }),
    route({
      method: 'POST',
      url: '/bc/v1/user/alias',
      tag: 'User',
      summary: 'Give a user a new primary id; earlier ids stay in aliases',
      body: aliasBodySchema,
      response: userRecordSchema,
      refusals: { 404: 'No user has the previous_id', 409: "The new id is another user's" },
      handler: ({ tenant, body }) =>
        db.write(async (tx) => userRecord(tx, tenant, await aliasUser(tx, tenant, body, new Date()))),
    }),
  ];
}
