import type { FastifyRequest } from 'fastify';

/** The original's api_url (wire-api.md §8.4): site_url when absolute, else scheme://host + its path. */
export function apiUrl(req: FastifyRequest, siteUrl: string): string {
  if (/^https?:\/\//i.test(siteUrl)) return siteUrl.replace(/\/+$/, '');
  const proto = String(req.headers['x-forwarded-proto'] ?? '').split(',')[0]?.trim() === 'https' || req.protocol === 'https' ? 'https' : 'http';
  const host = String(req.headers['x-forwarded-host'] ?? req.headers.host ?? 'localhost').split(',')[0]!.trim();
  const base = siteUrl.replace(/\/+$/, '');
  return `${proto}://${host}${base && !base.startsWith('/') ? `/${base}` : base}`;
}
