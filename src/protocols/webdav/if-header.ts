/** One condition of an `If` header list: a state token `<…>` or an entity tag `[…]`, maybe negated. */
export interface IfCondition {
  not: boolean;
  token?: string;
  etag?: string;
}

export interface IfList {
  /** The tagged resource (`<url>` before the list); the request's own resource when absent. */
  resource?: string;
  conditions: IfCondition[];
}

export class IfHeaderError extends Error {}

/** Parses an RFC 4918 §10.4 `If` header. */
export function parseIfHeader(header: string): IfList[] {
  const lists: IfList[] = [];
  let i = 0;
  let tag: string | undefined;
  const skip = () => {
    while (i < header.length && /\s/.test(header[i]!)) i++;
  };
  const until = (end: string) => {
    const j = header.indexOf(end, i);
    if (j < 0) throw new IfHeaderError(`unterminated ${end === '>' ? '<' : '['} in If header`);
    const v = header.slice(i, j);
    i = j + 1;
    return v;
  };
  for (skip(); i < header.length; skip()) {
    const c = header[i]!;
    if (c === '<') {
      i++;
      tag = until('>');
      continue;
    }
    if (c !== '(') throw new IfHeaderError(`unexpected ${c} in If header`);
    i++;
    const conditions: IfCondition[] = [];
    for (skip(); header[i] !== ')'; skip()) {
      if (i >= header.length) throw new IfHeaderError('unterminated ( in If header');
      let not = false;
      if (header.slice(i, i + 3).toLowerCase() === 'not') {
        not = true;
        i += 3;
        skip();
      }
      if (header[i] === '<') {
        i++;
        conditions.push({ not, token: until('>') });
      } else if (header[i] === '[') {
        i++;
        conditions.push({ not, etag: until(']') });
      } else {
        throw new IfHeaderError(`unexpected ${header[i]} in If header`);
      }
    }
    i++;
    if (conditions.length === 0) throw new IfHeaderError('empty list in If header');
    lists.push({ resource: tag, conditions });
  }
  if (lists.length === 0) throw new IfHeaderError('empty If header');
  return lists;
}

/** Every state token the header names: the lock tokens the client submits. */
export function submittedTokens(lists: IfList[]): Set<string> {
  return new Set(lists.flatMap((l) => l.conditions.flatMap((c) => (c.token ? [c.token] : []))));
}

export interface IfResource {
  /** Lock tokens of the locks covering the resource. */
  tokens: Set<string>;
  /** Its entity tag, or undefined when it does not exist. */
  etag?: string;
}

/** True when one of the lists holds for the resources it names. */
export async function evaluateIf(lists: IfList[], resolve: (resource: string | undefined) => Promise<IfResource>): Promise<boolean> {
  for (const list of lists) {
    const r = await resolve(list.resource);
    const holds = list.conditions.every((c) => {
      const match = c.token !== undefined ? r.tokens.has(c.token) : r.etag !== undefined && weakEqual(r.etag, c.etag!);
      return c.not ? !match : match;
    });
    if (holds) return true;
  }
  return false;
}

const weakEqual = (a: string, b: string) => a.replace(/^W\//, '') === b.replace(/^W\//, '');
