import type { ObjectTagsRepo, Tag } from '../../db/object-tags.js';
import type { Obj } from '../../drivers/types.js';
import { S3Error } from './errors.js';
import { document, type XmlNode } from './xml.js';

/** S3's limits on object tags: 10 a object, keys of 1–128 characters, values of up to 256. */
const MAX_TAGS = 10;
const MAX_KEY = 128;
const MAX_VALUE = 256;
/** The characters S3 allows in tag keys and values: letters, digits, spaces and `_ . : / = + - @`. */
const TAG_CHARS = /^[\p{L}\p{Z}\p{N}_.:/=+\-@]*$/u;

const invalidTag = (message: string) => new S3Error(400, 'InvalidTag', message);

/** Checks a tag set as S3 does (InvalidTag); returns it. */
export function checkTags(tags: Tag[]): Tag[] {
  if (tags.length > MAX_TAGS) throw invalidTag(`Object tags cannot be greater than ${MAX_TAGS}`);
  const seen = new Set<string>();
  for (const [key, value] of tags) {
    if (key.length === 0 || key.length > MAX_KEY) throw invalidTag(`The TagKey you have provided is invalid (1 to ${MAX_KEY} characters)`);
    if (value.length > MAX_VALUE) throw invalidTag(`The TagValue you have provided is invalid (at most ${MAX_VALUE} characters)`);
    if (!TAG_CHARS.test(key) || !TAG_CHARS.test(value)) throw invalidTag('The TagKey or TagValue you have provided holds characters that are not allowed');
    if (key.toLowerCase().startsWith('aws:')) throw invalidTag('Your TagKey cannot be prefixed with aws:');
    if (seen.has(key)) throw invalidTag('Cannot provide multiple Tags with the same key');
    seen.add(key);
  }
  return tags;
}

/** The tag set of a PutObjectTagging body (`<Tagging><TagSet><Tag><Key/><Value/></Tag>…`). */
export function tagsFromXml(body: Record<string, unknown>): Tag[] {
  const tagging = body.Tagging as { TagSet?: { Tag?: unknown[] } | string } | undefined;
  if (tagging === undefined || typeof tagging !== 'object' || tagging === null || !('TagSet' in tagging)) {
    throw new S3Error(400, 'MalformedXML', 'The XML you provided was not well-formed or did not validate against our published schema.');
  }
  const set = tagging.TagSet;
  const list = typeof set === 'object' && set !== null ? (set.Tag ?? []) : [];
  return checkTags(
    list.map((t) => {
      const { Key, Value } = (t ?? {}) as { Key?: unknown; Value?: unknown };
      if (typeof Key !== 'string' || (Value !== undefined && typeof Value !== 'string')) throw invalidTag('A Tag needs a Key and a Value.');
      return [Key, Value ?? ''] as Tag;
    }),
  );
}

/** The tag set of an `x-amz-tagging` header (URL query form: `k1=v1&k2=v2`); undefined without one. */
export function tagsFromHeader(raw: string | string[] | undefined): Tag[] | undefined {
  if (raw === undefined) return undefined;
  const text = Array.isArray(raw) ? raw.join('&') : raw;
  const tags: Tag[] = [];
  for (const part of text.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    try {
      const dec = (s: string) => decodeURIComponent(s.replace(/\+/g, '%20'));
      tags.push(eq < 0 ? [dec(part), ''] : [dec(part.slice(0, eq)), dec(part.slice(eq + 1))]);
    } catch {
      throw new S3Error(400, 'InvalidArgument', 'The x-amz-tagging header is not URL query encoded.');
    }
  }
  return checkTags(tags);
}

export function taggingDocument(tags: Tag[]): string {
  const set: XmlNode[] = tags.map(([k, v]) => ['Tag', [['Key', k], ['Value', v]]]);
  return document('Tagging', [['TagSet', set]]);
}

/**
 * Object tags kept in the database by virtual path, with the size and modification time of the
 * object they were set on: an object written since by another front (or by a multipart upload)
 * is another object, and its stale tags are dropped when next read.
 */
export class S3Tags {
  constructor(private readonly repo: ObjectTagsRepo) {}

  async of(p: string, obj: Obj): Promise<Tag[]> {
    const row = await this.repo.get(p);
    if (!row) return [];
    if (row.size !== obj.size || row.modified !== obj.modified.getTime()) {
      await this.repo.delete(p);
      return [];
    }
    return row.tags;
  }

  /** Sets the tags of the object now at `p` (an empty set removes them). */
  async set(p: string, obj: Obj, tags: Tag[]): Promise<void> {
    await this.repo.set({ path: p, tags, size: obj.size, modified: obj.modified.getTime() });
  }

  async drop(p: string): Promise<void> {
    await this.repo.delete(p);
  }
}
