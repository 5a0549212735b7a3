import { AppError, isKind, KindError } from '../errors.js';

/**
 * Who created a task: the user's id, name and role, and the folder passwords they presented
 * (the API's `password` / `dst_password`), against which each name the task writes is decided.
 */
export interface TaskCreator {
  id: number;
  username: string;
  role: number;
  passwords?: string[];
}

/**
 * What a task decides each name with: its creator's rules as the account and the rules are at
 * that moment (implemented by the per-user view, view/task-access.ts). Each check throws the kind
 * a direct request of that name would get.
 */
export interface CreatorRules {
  /** As a direct upload of a file at `p` (base path, bits, hide, folder passwords, write rule, system files). */
  checkPut(p: string): void;
  /** As a direct mkdir of `p`. */
  checkMkdir(p: string): void;
  /** As a direct read of `p` (the source of a copy or move). */
  checkRead(p: string): void;
}

/** Where the task manager gets a creator's rules (view/task-access.ts). */
export interface CreatorAccess {
  /**
   * The creator's rules for a task of `kind`, as they are now: `Unauthorized` when the creator is
   * deleted or disabled, `Forbidden` when they lack the bit the kind needs.
   */
  rules(task: { id: string; kind: string; creator: TaskCreator }): Promise<CreatorRules>;
}

/** The rules of a task nobody created (the server's own): nothing is refused. */
export const SYSTEM_RULES: CreatorRules = { checkPut: () => undefined, checkMkdir: () => undefined, checkRead: () => undefined };

/** A task error that a retry would only repeat: the task goes failed at once. */
export class FinalTaskError extends KindError {}

export const MSG_CREATOR_STOPPED = 'the task was stopped: its creator may no longer run it';

/** The creator was disabled, deleted or lost the task's bit: the task stops at its next name. */
export class CreatorStopped extends FinalTaskError {
  constructor(cause: AppError) {
    super(cause.kind, `${MSG_CREATOR_STOPPED} (${cause.message})`);
  }
}

/** Refusals a task skips and names (the rest of its names go on). */
const REFUSED_KINDS = ['Forbidden', 'PasswordRequired', 'Hidden', 'Exists', 'BadRequest', 'PathTooLong', 'TooLarge', 'QuotaExceeded'] as const;
/** Names listed in a task's error; the rest are counted. */
const LISTED = 20;

/** True when `err` refuses one name (skipped and named), not the whole task. */
export const refusesName = (err: unknown): boolean => isKind(err, ...REFUSED_KINDS) && !(err instanceof CreatorStopped);

/**
 * The names one task run skipped, with why, and the one error they end the task with once the
 * rest is done: `skipped 3 entries: secret.txt (permission denied), …`.
 */
export class SkippedNames {
  private readonly items: Array<{ name: string; reason: string }> = [];

  constructor(initial: Array<{ name: string; reason: string }> = []) {
    this.items.push(...initial);
  }

  get count(): number {
    return this.items.length;
  }

  add(name: string, reason: string): void {
    this.items.push({ name, reason });
  }

  /** Runs one name's write: a refusal is recorded (and false answered); any other failure is thrown. */
  async attempt(name: string, write: () => Promise<void> | void): Promise<boolean> {
    try {
      await write();
      return true;
    } catch (err) {
      if (!refusesName(err)) throw err;
      this.add(name, (err as Error).message);
      return false;
    }
  }

  /** Ends the run with the skipped names, when there are any. */
  throwIfAny(): void {
    if (this.items.length === 0) return;
    const n = this.items.length;
    const listed = this.items.slice(0, LISTED).map((i) => `${i.name} (${i.reason})`);
    if (n > LISTED) listed.push(`and ${n - LISTED} more`);
    throw new FinalTaskError('Forbidden', `skipped ${n} ${n === 1 ? 'entry' : 'entries'}: ${listed.join(', ')}`);
  }
}

/** One name's check in a task that writes one name: a refusal ends it with the name said, without a retry. */
export function refuseOne(name: string, check: () => void): void {
  try {
    check();
  } catch (err) {
    if (!refusesName(err)) throw err;
    new SkippedNames([{ name, reason: (err as Error).message }]).throwIfAny();
  }
}

/** A file name taken from outside (a download's Content-Disposition or URL) that is one plain segment. */
export function refuseUnsafeName(name: string): void {
  const unsafe = name === '' || name === '.' || name === '..' || /[/\\\0]/.test(name) || /^[a-zA-Z]:/.test(name);
  if (unsafe) new SkippedNames([{ name, reason: 'unsafe file name' }]).throwIfAny();
}
