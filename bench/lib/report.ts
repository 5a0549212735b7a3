import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fmtNum, GiB } from './stats.js';
import type { AreaResult, DetailTable, SummaryRow } from './types.js';

const esc = (s: string) => s.replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ');

/** An error shortened for a table cell (the full text is in the Errors list). */
export function shortError(s: string, max = 160): string {
  const flat = s.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** The machine a run's figures come from: Node, CPUs, memory, kernel (the start of `result.environment`). */
export function machine(): Record<string, string> {
  return {
    node: process.version,
    cpus: `${os.cpus().length} × ${os.cpus()[0]?.model ?? '?'}`,
    memory: `${(os.totalmem() / GiB).toFixed(1)} GiB`,
    kernel: `${os.type()} ${os.release()}`,
  };
}

/** An error's message (any thrown value's text), its first `lines` lines joined on one line. */
export function errorText(err: unknown, lines = 6): string {
  return (err instanceof Error ? err.message : String(err)).split('\n').slice(0, lines).join(' / ');
}

export function markdownTable(columns: string[], rows: Array<Array<string | number | null>>): string {
  const cell = (v: string | number | null) => (v === null ? '—' : typeof v === 'number' ? fmtNum(v, Number.isInteger(v) ? 0 : 2) : esc(v));
  const lines = [`| ${columns.map(esc).join(' | ')} |`, `|${columns.map(() => '---').join('|')}|`];
  for (const r of rows) lines.push(`| ${r.map(cell).join(' | ')} |`);
  return lines.join('\n');
}

function digitsFor(unit: string): number {
  if (unit === 'queries' || unit === 'commands') return 4; // per-request counts near zero
  if (unit === 'CPU s') return 3;
  return unit === 'ms' ? 2 : unit === 'MB' ? 1 : 1;
}

export function summaryRows(rows: SummaryRow[]): Array<Array<string>> {
  return rows.map((r) => {
    const d = digitsFor(r.unit);
    const atrium = r.atrium === null ? (r.error ? 'ERROR' : '—') : `${fmtNum(r.atrium, d)} ${r.unit}`;
    const peer = r.peerName ? (r.peer === null || r.peer === undefined ? `${r.peerName}: —` : `${r.peerName}: ${fmtNum(r.peer, d)} ${r.unit}`) : '—';
    const ratio = r.ratio === null || r.ratio === undefined ? '—' : `${r.ratio.toFixed(2)}×`;
    const met = !r.target ? '—' : r.met === true ? 'yes' : r.met === false ? '**NO**' : r.error ? 'error' : '?';
    return [r.benchmark, atrium, peer, ratio, r.target || '—', met];
  });
}

export const SUMMARY_COLUMNS = ['benchmark', 'atrium', 'peer', 'ratio', 'target', 'met'];

export function renderDetail(t: DetailTable): string {
  return `### ${t.title}\n\n${markdownTable(t.columns, t.rows)}\n`;
}

export function renderArea(r: AreaResult): string {
  const parts: string[] = [];
  parts.push(`## ${r.title} (\`${r.area}\`)${r.quick ? ' — QUICK run (BENCH_QUICK=1), figures are a smoke test' : ''}`);
  parts.push('');
  parts.push(`Started ${r.startedAt}, took ${r.durationS.toFixed(0)} s.`);
  const env = Object.entries(r.environment).map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`);
  if (env.length) parts.push('', ...env.map((e) => `- ${e}`));
  const params = Object.entries(r.parameters).map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`);
  if (params.length) parts.push('', `Parameters: ${params.join(', ')}`);
  parts.push('');
  for (const d of r.details) parts.push(renderDetail(d));
  parts.push('### Summary', '', markdownTable(SUMMARY_COLUMNS, summaryRows(r.summary)), '');
  if (r.errors.length) {
    parts.push('### Errors', '');
    for (const e of r.errors) parts.push(`- **${esc(e.benchmark)}** (${e.subject}):`, '', '  ```', ...e.message.split('\n').map((l) => `  ${l}`), '  ```');
    parts.push('');
  }
  return parts.join('\n');
}

/** `20261122T205312Z`: ISO 8601 basic format, safe in file names. */
export function isoStamp(d = new Date()): string {
  return d.toISOString().replace(/\.\d+Z$/, 'Z').replace(/[-:]/g, '');
}

export function writeResult(dir: string, r: AreaResult): { json: string; md: string } {
  mkdirSync(dir, { recursive: true });
  const base = path.join(dir, `${r.area}-${isoStamp(new Date(r.startedAt))}`);
  writeFileSync(`${base}.json`, JSON.stringify(r, null, 2) + '\n');
  writeFileSync(`${base}.md`, `# Atrium benchmark: ${r.area}\n\n${renderArea(r)}`);
  return { json: `${base}.json`, md: `${base}.md` };
}
