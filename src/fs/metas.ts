import type { Meta, MetasRepo } from '../db/metas.js';
import { BadRequest, Exists, NotFound } from '../errors.js';
import { cleanPath } from '../util/paths.js';

/** A rule as the admin sends it: `group_id` left out is everyone's rule (create) or the rule's own group kept (update). */
export type MetaInput = Omit<Meta, 'id' | 'group_id'> & { id?: number; group_id?: number };

/** Where a rule's group is checked to exist (the groups repository). */
export interface GroupLookup {
  byId(id: number): Promise<unknown>;
}

const NO_GROUPS: readonly number[] = [];

export interface Loaded {
  meta: Meta;
  /** The `hide` lines compiled; empty lines are skipped (the original let one hide everything). */
  hides: RegExp[];
}

function compileHides(hide: string): RegExp[] {
  const out: RegExp[] = [];
  for (const line of hide.split('\n')) {
    const pattern = line.replace(/\r$/, '');
    if (pattern === '') continue;
    try {
      out.push(new RegExp(pattern, 'u'));
    } catch (err) {
      throw new BadRequest(`${pattern} is illegal: ${(err as Error).message}`);
    }
  }
  return out;
}

/**
 * Path rules held in memory (they are few) and reloaded after every change. Only the nearest
 * rule up the tree applies, and each of its parts only to its own path unless its `*_sub` flag
 * is set (wire-api.md §7.4); the per-user view (view/rules.ts) finds it, once per ancestor.
 * A rule with a `group_id` applies to that group's members only, and at its path it takes the
 * place of the rule for everyone (docs/access-and-security.md, group path rules).
 */
export class Metas {
  /** The rules for everyone (group_id 0), by path. */
  private byPath = new Map<string, Loaded>();
  /** The rules of each group that has some, by path. */
  private byGroup = new Map<number, Map<string, Loaded>>();
  private rules: Loaded[] = [];
  /** Bumped on every reload, for caches of values derived from rules. */
  version = 0;
  /** Called after a rule was created, changed or deleted here (the cluster tells other processes). */
  onChange: () => void = () => {};

  constructor(
    private readonly repo: MetasRepo,
    private readonly groups: GroupLookup,
  ) {}

  async reload(): Promise<void> {
    const next = new Map<string, Loaded>();
    const byGroup = new Map<number, Map<string, Loaded>>();
    const rules: Loaded[] = [];
    for (const meta of await this.repo.all()) {
      let hides: RegExp[] = [];
      try {
        hides = compileHides(meta.hide);
      } catch {
        hides = [/[\s\S]/u]; // an unreadable rule hides everything rather than nothing
      }
      const loaded = { meta, hides };
      rules.push(loaded);
      if (meta.group_id === 0) next.set(meta.path, loaded);
      else {
        let own = byGroup.get(meta.group_id);
        if (!own) byGroup.set(meta.group_id, (own = new Map()));
        own.set(meta.path, loaded);
      }
    }
    this.byPath = next;
    this.byGroup = byGroup;
    this.rules = rules;
    this.version++;
  }

  /** Reloads after rules changed elsewhere (a group deleted with its rules) and tells the other processes. */
  async changed(): Promise<void> {
    await this.reload();
    this.onChange();
  }

  /** Every rule, of everyone and of every group (the admin's list, checks that hold for anyone). */
  all(): Iterable<Loaded> {
    return this.rules;
  }

  /**
   * The rule of exactly this path for a member of `groups` (ids in ascending order): the rule
   * of the first of those groups that has one there, else the rule for everyone.
   */
  exact(p: string, groups: readonly number[] = NO_GROUPS): Loaded | undefined {
    for (const g of groups) {
      const own = this.byGroup.get(g)?.get(p);
      if (own) return own;
    }
    return this.byPath.get(p);
  }

  /** The rules in effect for a member of `groups` (ascending): theirs, and everyone's where no group rule of theirs takes its place. */
  *inEffect(groups: readonly number[] = NO_GROUPS): Iterable<Loaded> {
    for (const l of this.rules) {
      const g = l.meta.group_id;
      if (g !== 0 && !groups.includes(g)) continue;
      if (this.exact(l.meta.path, groups) === l) yield l;
    }
  }

  /** The principals rules can tell apart: no group (everyone), and each group that has rules alone. */
  audiences(): Array<readonly number[]> {
    return [NO_GROUPS, ...[...this.byGroup.keys()].sort((a, b) => a - b).map((g) => [g])];
  }

  private checkBody(input: MetaInput): void {
    if (!input.path || input.path.trim() === '') throw new BadRequest('path is required');
    compileHides(input.hide ?? '');
  }

  private async normalize(input: MetaInput, groupId: number): Promise<Omit<Meta, 'id'>> {
    if (!Number.isInteger(groupId) || groupId < 0) throw new BadRequest('group_id must be a group id, or 0 for everyone');
    if (groupId !== 0 && !(await this.groups.byId(groupId))) throw new BadRequest(`group_id: no group ${groupId}`);
    return { ...input, path: cleanPath(input.path), group_id: groupId };
  }

  private async refuseTaken(m: Omit<Meta, 'id'>, id?: number): Promise<void> {
    const other = await this.repo.byPath(m.path, m.group_id);
    if (other && other.id !== id) throw new Exists(`meta of path ${m.path}${m.group_id === 0 ? '' : ` for group ${m.group_id}`} already exists`);
  }

  async create(input: MetaInput): Promise<number> {
    this.checkBody(input);
    const m = await this.normalize(input, input.group_id ?? 0);
    await this.refuseTaken(m);
    const id = await this.repo.create(m);
    await this.changed();
    return id;
  }

  /** Saves a rule; `group_id` left out keeps the rule's group (an OpenList client never sends it). */
  async update(input: MetaInput & { id: number }): Promise<void> {
    this.checkBody(input);
    const old = await this.repo.byId(input.id);
    if (!old) throw new NotFound('meta not found');
    const m = await this.normalize(input, input.group_id ?? old.group_id);
    await this.refuseTaken(m, input.id);
    await this.repo.update({ ...m, id: input.id });
    await this.changed();
  }

  async delete(id: number): Promise<void> {
    if (!(await this.repo.byId(id))) throw new NotFound('meta not found');
    await this.repo.delete(id);
    await this.changed();
  }
}
