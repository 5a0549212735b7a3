// The audit log (admins): every operation, newest first, with the filters of /api/admin/audit/list.
import { createResource, createSignal, For, Show } from 'solid-js';
import { api } from '../../api';
import type { AuditEvent } from '../../../../src/server/wire-types';
import { formatDate, formatSize } from '../../format';
import { t } from '../../i18n';
import { DataTable, PageHead } from './Table';
import { FRONTS, OPS, RESULTS } from '../../audit-ops';

const PER_PAGE = 50;

type Filters = Record<'user' | 'op' | 'front' | 'path' | 'result' | 'since' | 'until', string>;
const EMPTY: Filters = { user: '', op: '', front: '', path: '', result: '', since: '', until: '' };

/** A `datetime-local` value (the browser's time zone) as ISO 8601. */
const iso = (local: string) => (local ? new Date(local).toISOString() : '');

function query(f: Filters, page: number): string {
  const q = new URLSearchParams({ page: String(page), per_page: String(PER_PAGE) });
  for (const [k, v] of Object.entries(f)) {
    const value = k === 'since' || k === 'until' ? iso(v) : v.trim();
    if (value) q.set(k, value);
  }
  return `/admin/audit/list?${q}`;
}

function Choice(props: { name: keyof Filters; label: string; options: readonly string[]; value: string; onChange: (v: string) => void }) {
  return (
    <label>
      {props.label}
      <select name={`audit-${props.name}`} value={props.value} onChange={(e) => props.onChange(e.currentTarget.value)}>
        <option value="">{t('audit.any')}</option>
        <For each={props.options}>{(o) => <option value={o}>{o}</option>}</For>
      </select>
    </label>
  );
}

function Text(props: { name: keyof Filters; label: string; type?: string; title?: string; value: string; onInput: (v: string) => void }) {
  return (
    <label title={props.title}>
      {props.label}
      <input name={`audit-${props.name}`} type={props.type ?? 'text'} value={props.value} onInput={(e) => props.onInput(e.currentTarget.value)} />
    </label>
  );
}

export default function Audit() {
  const [draft, setDraft] = createSignal<Filters>({ ...EMPTY });
  const [applied, setApplied] = createSignal<{ f: Filters; page: number }>({ f: { ...EMPTY }, page: 1 });
  const [data, { refetch }] = createResource(applied, ({ f, page }) => api<{ content: AuditEvent[]; total: number }>(query(f, page)));
  const set = (k: keyof Filters) => (v: string) => setDraft({ ...draft(), [k]: v });
  const pages = () => Math.max(1, Math.ceil((data()?.total ?? 0) / PER_PAGE));
  const go = (page: number) => setApplied({ ...applied(), page });
  const columns = [t('audit.time'), t('audit.user'), t('audit.front'), t('audit.op'), t('audit.path'), t('audit.dst_path'), t('audit.bytes'), t('audit.result'), t('audit.ip')];
  return (
    <>
      <PageHead title={t('m.audit')}>
        <button onClick={() => void refetch()}>{t('refresh')}</button>
      </PageHead>
      <form
        class="audit-filters form-grid"
        aria-label={t('m.audit')}
        onSubmit={(e) => {
          e.preventDefault();
          setApplied({ f: { ...draft() }, page: 1 });
        }}
      >
        <Text name="user" label={t('audit.user')} value={draft().user} onInput={set('user')} />
        <Choice name="op" label={t('audit.op')} options={OPS} value={draft().op} onChange={set('op')} />
        <Choice name="front" label={t('audit.front')} options={FRONTS} value={draft().front} onChange={set('front')} />
        <Choice name="result" label={t('audit.result')} options={RESULTS} value={draft().result} onChange={set('result')} />
        <Text name="path" label={t('audit.path')} title={t('audit.path_hint')} value={draft().path} onInput={set('path')} />
        <Text name="since" label={t('audit.since')} type="datetime-local" value={draft().since} onInput={set('since')} />
        <Text name="until" label={t('audit.until')} type="datetime-local" value={draft().until} onInput={set('until')} />
        <div class="buttons">
          <button type="submit" class="primary">{t('audit.apply')}</button>
          <button type="button" onClick={() => (setDraft({ ...EMPTY }), setApplied({ f: { ...EMPTY }, page: 1 }))}>
            {t('audit.clear')}
          </button>
        </div>
      </form>
      <Show when={data.error}>
        <p class="error" role="alert">{String((data.error as Error).message)}</p>
      </Show>
      <DataTable columns={columns} rows={data.latest?.content}>
        {(e) => (
          <tr classList={{ refused: e.result !== 'ok' }}>
            <td>{formatDate(e.time)}</td>
            <td>{e.user}</td>
            <td>{e.front}</td>
            <td>{e.op}</td>
            <td class="path">{e.path}</td>
            <td class="path">{e.dst_path}</td>
            <td>{e.bytes ? formatSize(e.bytes) : ''}</td>
            <td>{e.result}</td>
            <td>{e.ip}</td>
          </tr>
        )}
      </DataTable>
      <nav class="pager" aria-label={t('audit.page', { page: applied().page, pages: pages(), total: data.latest?.total ?? 0 })}>
        <button disabled={applied().page <= 1} onClick={() => go(applied().page - 1)}>
          {t('audit.previous')}
        </button>
        <span class="muted">{t('audit.page', { page: applied().page, pages: pages(), total: data.latest?.total ?? 0 })}</span>
        <button disabled={applied().page >= pages()} onClick={() => go(applied().page + 1)}>
          {t('audit.next')}
        </button>
      </nav>
    </>
  );
}
