import type { Selectable } from 'kysely';
import { type DbHandle, insertReturningId } from './index.js';
import type { WebauthnChallengesTable, WebauthnCredentialsTable } from './schema.js';

export interface PasskeyCredential {
  id: number;
  userId: number;
  credentialHash: string;
  /** base64url */
  credentialId: string;
  /** base64url of the COSE key */
  publicKey: string;
  signCount: number;
  transports: string[];
  aaguid: string;
  backedUp: boolean;
  name: string;
  creatorIp: string;
  creatorUa: string;
  addedTime: number;
  /** 0 until first used. */
  lastUsedTime: number;
}

export type Ceremony = 'registration' | 'login';

export interface PasskeyChallenge {
  id: string;
  ceremony: Ceremony;
  userId: number;
  admission: string;
  challenge: string;
  rpId: string;
  origin: string;
  expiresAt: number;
}

function credentialFrom(r: Selectable<WebauthnCredentialsTable>): PasskeyCredential {
  return {
    id: Number(r.id),
    userId: Number(r.user_id),
    credentialHash: r.credential_hash,
    credentialId: r.credential_id,
    publicKey: r.public_key,
    signCount: Number(r.sign_count),
    transports: r.transports ? r.transports.split(',') : [],
    aaguid: r.aaguid,
    backedUp: Number(r.backed_up) === 1,
    name: r.name,
    creatorIp: r.creator_ip,
    creatorUa: r.creator_ua,
    addedTime: Number(r.added_time),
    lastUsedTime: Number(r.last_used_time),
  };
}

function challengeFrom(r: Selectable<WebauthnChallengesTable>): PasskeyChallenge {
  return {
    id: r.id,
    ceremony: r.ceremony as Ceremony,
    userId: Number(r.user_id),
    admission: r.admission,
    challenge: r.challenge,
    rpId: r.rp_id,
    origin: r.origin,
    expiresAt: Number(r.expires_at),
  };
}

/** Passkeys (`webauthn_credentials`) and begun ceremonies (`webauthn_challenges`). */
export class WebauthnRepo {
  constructor(private readonly h: DbHandle) {}

  async ofUser(userId: number): Promise<PasskeyCredential[]> {
    return (await this.h.db.selectFrom('webauthn_credentials').selectAll().where('user_id', '=', userId).orderBy('id').execute()).map(credentialFrom);
  }

  async byHash(credentialHash: string): Promise<PasskeyCredential | undefined> {
    const r = await this.h.db.selectFrom('webauthn_credentials').selectAll().where('credential_hash', '=', credentialHash).executeTakeFirst();
    return r && credentialFrom(r);
  }

  async create(c: Omit<PasskeyCredential, 'id'>): Promise<number> {
    return insertReturningId(
      this.h,
      this.h.db.insertInto('webauthn_credentials').values({
        user_id: c.userId,
        credential_hash: c.credentialHash,
        credential_id: c.credentialId,
        public_key: c.publicKey,
        sign_count: c.signCount,
        transports: c.transports.join(','),
        aaguid: c.aaguid,
        backed_up: c.backedUp ? 1 : 0,
        name: c.name,
        creator_ip: c.creatorIp,
        creator_ua: c.creatorUa,
        added_time: c.addedTime,
        last_used_time: c.lastUsedTime,
      }),
    );
  }

  /**
   * Records a sign-in with the counter the authenticator reported, only if the stored counter is
   * still the one the assertion was checked against: of two sign-ins racing with one counter
   * value (a cloned authenticator), one wins. False when the row changed meanwhile (or is gone).
   */
  async advance(id: number, checkedCount: number, newCount: number, when: number): Promise<boolean> {
    const r = await this.h.db
      .updateTable('webauthn_credentials')
      .set({ sign_count: newCount, last_used_time: when })
      .where('id', '=', id)
      .where('sign_count', '=', checkedCount)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  async delete(id: number): Promise<void> {
    await this.h.db.deleteFrom('webauthn_credentials').where('id', '=', id).execute();
  }

  async deleteOfUser(userId: number): Promise<void> {
    await this.h.db.deleteFrom('webauthn_credentials').where('user_id', '=', userId).execute();
    await this.h.db.deleteFrom('webauthn_challenges').where('user_id', '=', userId).execute();
  }

  async putChallenge(c: PasskeyChallenge): Promise<void> {
    await this.h.db
      .insertInto('webauthn_challenges')
      .values({
        id: c.id,
        ceremony: c.ceremony,
        user_id: c.userId,
        admission: c.admission,
        challenge: c.challenge,
        rp_id: c.rpId,
        origin: c.origin,
        expires_at: c.expiresAt,
      })
      .execute();
  }

  /** Drops challenges past their time; returns how many pending ones remain for `admission` and in all. */
  async pending(admission: string, now: number): Promise<{ mine: number; all: number }> {
    await this.h.db.deleteFrom('webauthn_challenges').where('expires_at', '<=', now).execute();
    const count = (q: ReturnType<WebauthnRepo['countQuery']>) => q.executeTakeFirstOrThrow().then((r) => Number(r.n));
    const [mine, all] = await Promise.all([count(this.countQuery().where('admission', '=', admission)), count(this.countQuery())]);
    return { mine, all };
  }

  private countQuery() {
    return this.h.db.selectFrom('webauthn_challenges').select((eb) => eb.fn.countAll().as('n'));
  }

  /**
   * Takes a challenge out: a delete that only one caller can win, so a challenge serves one
   * ceremony even when two processes receive the same answer at once.
   */
  async takeChallenge(id: string): Promise<PasskeyChallenge | undefined> {
    const r = await this.h.db.selectFrom('webauthn_challenges').selectAll().where('id', '=', id).executeTakeFirst();
    if (!r) return undefined;
    const del = await this.h.db.deleteFrom('webauthn_challenges').where('id', '=', id).executeTakeFirst();
    return Number(del.numDeletedRows) === 1 ? challengeFrom(r) : undefined;
  }
}
