import { z } from 'zod';
import { BadRequest } from '../errors.js';

/** An integer given as a JSON number or, from a query string, as decimal text. */
export const int = () =>
  z.union([
    z.number().int(),
    z
      .string()
      .regex(/^-?\d+$/, 'must be an integer')
      .transform(Number),
  ]);

/** A boolean given as JSON or as the text true/false/1/0. */
export const boolish = () =>
  z.union([z.boolean(), z.enum(['true', 'false', '1', '0', '']).transform((v) => v === 'true' || v === '1')]);

export const pageQuery = z.object({
  page: int().optional(),
  per_page: int().optional(),
});

/** The original's PageReq: page < 1 → 1, per_page < 1 → everything. */
export function pageOf(input: { page?: number; per_page?: number }): { page: number; perPage: number } {
  const page = input.page && input.page > 0 ? input.page : 1;
  const perPage = input.per_page && input.per_page > 0 ? input.per_page : 0;
  return { page, perPage };
}

/** The slice of `total` items one page of a listing shows (the original's pagination). */
export function pageBounds(input: { page?: number; per_page?: number }, total: number): { start: number; end: number } {
  const { page, perPage } = pageOf(input);
  if (perPage === 0) return { start: 0, end: total };
  const start = Math.min((page - 1) * perPage, total);
  return { start, end: Math.min(start + perPage, total) };
}

function valueAt(root: unknown, path: PropertyKey[]): unknown {
  let v = root;
  for (const k of path) v = v !== null && typeof v === 'object' ? (v as Record<PropertyKey, unknown>)[k] : undefined;
  return v;
}

const MAX_PREVIEW = 120;

/** The given value in a message: JSON, cut short; a value too deep or odd to print is named by its type. */
function preview(given: unknown): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(given);
  } catch {
    // Nested too deep for the serializer (or cyclic): the type says enough.
  }
  if (text === undefined) return Array.isArray(given) ? 'an array' : typeof given;
  return text.length > MAX_PREVIEW ? `${text.slice(0, MAX_PREVIEW)}…` : text;
}

function describeIssue(root: unknown, issue: z.core.$ZodIssue): string {
  const field = issue.path.map(String).join('.');
  const given = valueAt(root, issue.path);
  if (given === undefined && issue.code !== 'custom') return `${field || 'body'} is required`;
  if (issue.code === 'invalid_type' || issue.code === 'invalid_union') {
    return `${field}: expected ${issue.code === 'invalid_type' ? issue.expected : 'another type'}, got ${preview(given)}`;
  }
  return field ? `${field}: ${issue.message}` : issue.message;
}

export function parseInput<S extends z.ZodType>(schema: S, value: unknown): z.infer<S> {
  const root = value ?? {};
  const result = schema.safeParse(root);
  if (!result.success) throw new BadRequest(result.error.issues.map((i) => describeIssue(root, i)).join('; '));
  return result.data;
}
