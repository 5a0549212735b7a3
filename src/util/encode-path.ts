/** Percent-encodes each path segment, keeping the slashes (Go's url.PathEscape per segment). */
export function encodePath(p: string): string {
  return p
    .split('/')
    .map((s) => encodeURIComponent(s))
    .join('/');
}
