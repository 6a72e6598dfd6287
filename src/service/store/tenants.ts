import { createHash, randomBytes } from 'node:crypto';
import type { Database, Queryable } from './database.js';

export interface Tenant {
  orgId: string;
  projectId: string;
}

export interface StoredKey {
  keyHash: string;
  label: string | null;
  createdAt: Date;
}

export function hashKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

export function newApiKey(): string {
  return `cas_${randomBytes(24).toString('base64url')}`;
}

/** A key and project that cannot be provisioned together: the operator's mistake, not a bug. */
export class ProvisionConflictError extends Error {
  override name = 'ProvisionConflictError';
}

/** A key given to provision was revoked: it is never made valid again. */
export class RevokedKeyError extends Error {
  override name = 'RevokedKeyError';
}

/**
 * Keys held and never revoked. A revoked key's row can come back: an older build, which knows nothing
 * of revoked_keys, provisioned it again (`cas serve --api-key`) on the same store, and it worked
 * again here (found by probing upgrades).
 */
const HELD = 'key_hash NOT IN (SELECT key_hash FROM revoked_keys)';

/** Removes an organization's key and remembers it was revoked, so no provisioning brings it back. */
async function revoke(tx: Queryable, hash: string, orgId: string): Promise<void> {
  await tx.run('DELETE FROM api_keys WHERE key_hash = $1 AND org_id = $2', [hash, orgId]);
  await tx.run('INSERT INTO revoked_keys VALUES ($1, $2, now())', [hash, orgId]);
}

/**
 * Organizations, projects and keys. Keys are stored as SHA-256 hashes only; the in-memory index maps
 * hash → organization so authentication costs no query, and is refreshed on every provision.
 */
export class Tenants {
  private keys = new Map<string, string>();
  private projects = new Map<string, string>();
  private revoked = new Set<string>();
  private readonly keysChanged: Array<() => void> = [];

  private constructor(private readonly db: Database) {}

  static async load(db: Database): Promise<Tenants> {
    const tenants = new Tenants(db);
    await tenants.refresh();
    return tenants;
  }

  private async refresh(): Promise<void> {
    const keys = await this.db.read.all<{ key_hash: string; org_id: string }>(
      `SELECT key_hash, org_id FROM api_keys WHERE ${HELD}`,
    );
    const projects = await this.db.read.all<{ project_id: string; org_id: string }>(
      'SELECT project_id, org_id FROM projects',
    );
    const revoked = await this.db.read.all<{ key_hash: string }>('SELECT key_hash FROM revoked_keys');
    this.keys = new Map(keys.map((k) => [k.key_hash, k.org_id]));
    this.projects = new Map(projects.map((p) => [p.project_id, p.org_id]));
    this.revoked = new Set(revoked.map((r) => r.key_hash));
    for (const listener of this.keysChanged) listener();
  }

  /** Whether this secret's key was revoked. */
  isRevoked(apiKey: string): boolean {
    return this.revokedHash(hashKey(apiKey));
  }

  private revokedHash(hash: string): boolean {
    return this.revoked.has(hash);
  }

  /** Told after every change of the key index (a key added, revoked or rotated). */
  onKeysChanged(listener: () => void): void {
    this.keysChanged.push(listener);
  }

  /**
   * The public names (Tenants.keyId) of the keys this organization holds: a key held by another one
   * (a revoked secret adopted elsewhere) must not reopen the first one's live sockets.
   */
  keyIdsOf(orgId: string): string[] {
    const ids: string[] = [];
    for (const [hash, owner] of this.keys) if (owner === orgId) ids.push(Tenants.keyId(hash));
    return ids;
  }

  /**
   * Ensures the key and project exist and belong together (idempotent). A key already owned by another
   * organization than the project's is refused, so provisioning can never bridge two tenants.
   */
  async provision(input: { apiKey: string; projectId: string; orgId?: string }): Promise<Tenant> {
    const keyHash = hashKey(input.apiKey);
    if (this.revokedHash(keyHash)) {
      throw new RevokedKeyError(`the key ${Tenants.keyId(keyHash)} was revoked`);
    }
    const keyOrg = this.keys.get(keyHash);
    const projectOrg = this.projects.get(input.projectId);
    // A new organization's id is random: made of the key's hash, it put 48 bits of it in every
    // document and live frame, enough to find a short operator key offline (found by probing).
    const orgId = keyOrg ?? projectOrg ?? input.orgId ?? `org_${randomBytes(6).toString('hex')}`;
    if (projectOrg !== undefined && projectOrg !== orgId) {
      throw new ProvisionConflictError(
        `project ${input.projectId} belongs to another organization than this key`,
      );
    }
    // Every command's embedded service provisions its data directory's own key at start: once both
    // rows exist, that is a write transaction and two reads for nothing (~18 ms of each command).
    if (keyOrg !== undefined && keyOrg === projectOrg) return { orgId, projectId: input.projectId };
    await this.db.write(async (tx) => {
      await tx.run('INSERT INTO organizations VALUES ($1, $1, now()) ON CONFLICT DO NOTHING', [orgId]);
      await tx.run('INSERT INTO projects VALUES ($1, $2, $1, NULL, now()) ON CONFLICT DO NOTHING', [
        input.projectId,
        orgId,
      ]);
      await tx.run('INSERT INTO api_keys VALUES ($1, $2, NULL, now()) ON CONFLICT DO NOTHING', [
        keyHash,
        orgId,
      ]);
    });
    await this.refresh();
    return { orgId, projectId: input.projectId };
  }

  /** Whether the store holds this project (a data directory's credentials.json may name another's). */
  hasProject(projectId: string): boolean {
    return this.projects.has(projectId);
  }

  /** The oldest project whose id starts with `prefix` (a data directory's own: `local_`), if any. */
  async oldestProject(prefix: string): Promise<string | undefined> {
    const mine = [...this.projects.keys()].filter((id) => id.startsWith(prefix));
    if (mine.length < 2) return mine[0];
    const rows = await this.db.read.all<{ project_id: string }>(
      'SELECT project_id FROM projects WHERE starts_with(project_id, $1) ORDER BY created_at, project_id LIMIT 1',
      [prefix],
    );
    return rows[0]?.project_id;
  }

  /** 'forbidden' → 403 (unknown key, or a project the key's organization does not own). */
  authenticate(apiKey: string, projectId: string): Tenant | 'forbidden' {
    // Lookup is by SHA-256 of the presented key, never by the key itself: how long the lookup takes
    // depends on the hash, which an attacker cannot steer towards a stored key, so nothing leaks by timing.
    const orgId = this.keys.get(hashKey(apiKey));
    if (orgId === undefined) return 'forbidden';
    if (this.projects.get(projectId) !== orgId) return 'forbidden';
    return { orgId, projectId };
  }

  /** The public name of a key: never the secret, enough to revoke it (`key_` + 16 hex of its hash). */
  static keyId(keyHash: string): string {
    return `key_${keyHash.slice(0, 16)}`;
  }

  async listKeys(orgId: string): Promise<StoredKey[]> {
    const rows = await this.db.read.all<{ key_hash: string; label: string | null; created_at: Date }>(
      `SELECT key_hash, label, created_at FROM api_keys WHERE org_id = $1 AND ${HELD} ORDER BY created_at, key_hash`,
      [orgId],
    );
    return rows.map((r) => ({ keyHash: r.key_hash, label: r.label, createdAt: r.created_at }));
  }

  /** The stored hash a secret or key id names, when it is one of the organization's keys. */
  async findKey(orgId: string, secretOrId: string): Promise<string | undefined> {
    const keys = await this.listKeys(orgId);
    const byId = /^key_[0-9a-f]{16}$/.test(secretOrId)
      ? keys.find((k) => Tenants.keyId(k.keyHash) === secretOrId)
      : undefined;
    const hash = byId?.keyHash ?? hashKey(secretOrId);
    return keys.some((k) => k.keyHash === hash) ? hash : undefined;
  }

  /**
   * Stores a key for the organization (a new random one unless `secret` is given) and, in the same
   * transaction, revokes `replaces` (a rotation). A secret already held by another organization is
   * refused ('taken'); one the organization holds already is kept as it is; a revoked one is never
   * valid again ('revoked': associated again, by any organization, it worked again; found by probing).
   */
  async addKey(
    orgId: string,
    options: { secret?: string; label?: string | undefined; replaces?: string } = {},
  ): Promise<{ secret: string; keyHash: string } | 'taken' | 'revoked'> {
    const secret = options.secret ?? newApiKey();
    const keyHash = hashKey(secret);
    if (this.revokedHash(keyHash)) return 'revoked';
    const owner = this.keys.get(keyHash);
    if (owner !== undefined && owner !== orgId) return 'taken';
    await this.db.write(async (tx) => {
      await tx.run('INSERT INTO api_keys VALUES ($1, $2, $3, now()) ON CONFLICT DO NOTHING', [
        keyHash,
        orgId,
        options.label ?? null,
      ]);
      if (options.replaces !== undefined) {
        await revoke(tx, options.replaces, orgId);
      }
    });
    await this.refresh();
    return { secret, keyHash };
  }

  /** Revokes the given hashes of the organization's keys; the index forgets them at once. */
  async revokeKeys(orgId: string, keyHashes: readonly string[]): Promise<void> {
    if (keyHashes.length === 0) return;
    await this.db.write(async (tx) => {
      for (const hash of keyHashes) await revoke(tx, hash, orgId);
    });
    await this.refresh();
  }

  async setIntents(projectId: string, intentsJson: string): Promise<void> {
    await this.db.write((tx) =>
      tx.run('UPDATE projects SET intents = $1 WHERE project_id = $2', [intentsJson, projectId]),
    );
  }
}
