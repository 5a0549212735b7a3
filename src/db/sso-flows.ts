import type { DbHandle } from './index.js';

/** A pending sign-in at the provider, or a binding ticket handed to the browser. */
export interface SsoFlow {
  /** SHA-256 (hex) of the secret the browser holds (the `state`, or the ticket). */
  id: string;
  kind: 'flow' | 'ticket';
  /** `sso_get_token` or `get_sso_id`. */
  method: string;
  nonce: string;
  /** The PKCE code verifier. */
  verifier: string;
  /** SHA-256 (hex) of the browser cookie the flow was started with. */
  browser: string;
  /** The address that started the flow (pending flows are counted per address). */
  ip: string;
  redirectUri: string;
  /** For a ticket: the identity the provider vouched for. */
  subject: string;
  expiresAt: number;
}

/** The `sso_flows` table: short-lived, single-use records shared by every process on the database. */
export class SsoFlowsRepo {
  constructor(private readonly h: DbHandle) {}

  async create(f: SsoFlow): Promise<void> {
    await this.h.db
      .insertInto('sso_flows')
      .values({
        id: f.id,
        kind: f.kind,
        method: f.method,
        nonce: f.nonce,
        verifier: f.verifier,
        browser: f.browser,
        ip: f.ip,
        redirect_uri: f.redirectUri,
        subject: f.subject,
        expires_at: f.expiresAt,
      })
      .execute();
  }

  /**
   * Takes a record out: only the caller whose delete removed the row gets it, so a record is used
   * once even when two processes race for it. Expired records are not returned.
   */
  async take(id: string, kind: SsoFlow['kind'], now: number): Promise<SsoFlow | undefined> {
    const r = await this.h.db.selectFrom('sso_flows').selectAll().where('id', '=', id).where('kind', '=', kind).executeTakeFirst();
    if (!r) return undefined;
    const del = await this.h.db.deleteFrom('sso_flows').where('id', '=', id).executeTakeFirst();
    if (Number(del.numDeletedRows) !== 1 || Number(r.expires_at) <= now) return undefined;
    return {
      id: r.id,
      kind: r.kind as SsoFlow['kind'],
      method: r.method,
      nonce: r.nonce,
      verifier: r.verifier,
      browser: r.browser,
      ip: r.ip,
      redirectUri: r.redirect_uri,
      subject: r.subject,
      expiresAt: Number(r.expires_at),
    };
  }

  async deleteExpired(now: number): Promise<void> {
    await this.h.db.deleteFrom('sso_flows').where('expires_at', '<=', now).execute();
  }

  /** Records pending, of one address when `ip` is given. */
  async count(ip?: string): Promise<number> {
    let q = this.h.db.selectFrom('sso_flows').select((eb) => eb.fn.countAll().as('n'));
    if (ip !== undefined) q = q.where('ip', '=', ip);
    const r = await q.executeTakeFirstOrThrow();
    return Number(r.n);
  }
}
