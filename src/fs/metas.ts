import type { Meta, MetasRepo } from '../db/metas.js';
import { BadRequest, Exists, NotFound } from '../errors.js';
import { cleanPath } from '../util/paths.js';

export type MetaInput = Omit<Meta, 'id'> & { id?: number };

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
 */
export class Metas {
  private byPath = new Map<string, Loaded>();
  /** Bumped on every reload, for caches of values derived from rules. */
  version = 0;
  /** Called after a rule was created, changed or deleted here (the cluster tells other processes). */
  onChange: () => void = () => {};

  constructor(private readonly repo: MetasRepo) {}

  async reload(): Promise<void> {
    const next = new Map<string, Loaded>();
    for (const meta of await this.repo.all()) {
      let hides: RegExp[] = [];
      try {
        hides = compileHides(meta.hide);
      } catch {
        hides = [/[\s\S]/u]; // an unreadable rule hides everything rather than nothing
      }
      next.set(meta.path, { meta, hides });
    }
    this.byPath = next;
    this.version++;
  }

  /** Every rule, for checks over a subtree (what a moved folder carries). */
  all(): Iterable<Loaded> {
    return this.byPath.values();
  }

  /** The rule of exactly this path. */
  exact(p: string): Loaded | undefined {
    return this.byPath.get(p);
  }

  private normalize(input: MetaInput): Omit<Meta, 'id'> {
    if (!input.path || input.path.trim() === '') throw new BadRequest('path is required');
    compileHides(input.hide ?? '');
    return { ...input, path: cleanPath(input.path) };
  }

  async create(input: MetaInput): Promise<number> {
    const m = this.normalize(input);
    if (await this.repo.byPath(m.path)) throw new Exists(`meta of path ${m.path} already exists`);
    const id = await this.repo.create(m);
    await this.reload();
    this.onChange();
    return id;
  }

  async update(input: MetaInput & { id: number }): Promise<void> {
    const m = this.normalize(input);
    if (!(await this.repo.byId(input.id))) throw new NotFound('meta not found');
    const other = await this.repo.byPath(m.path);
    if (other && other.id !== input.id) throw new Exists(`meta of path ${m.path} already exists`);
    await this.repo.update({ ...m, id: input.id });
    await this.reload();
    this.onChange();
  }

  async delete(id: number): Promise<void> {
    if (!(await this.repo.byId(id))) throw new NotFound('meta not found');
    await this.repo.delete(id);
    await this.reload();
    this.onChange();
  }
}
