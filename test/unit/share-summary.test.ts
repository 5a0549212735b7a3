import { describe, expect, it } from 'vitest';
import { renderSummary, type SummaryData } from '../../web/src/shares/summary.js';
import { builtinSettings } from '../../src/settings/defaults.js';

const template = builtinSettings().find((d) => d.key === 'share_summary_content')!.value;
const data = (over: Partial<SummaryData> = {}): SummaryData => ({
  id: 'AbC123',
  files: ['/docs/report.txt'],
  pwd: '',
  expires: null,
  creator: 'alice',
  remark: '',
  site_title: 'Atrium',
  base_url: 'http://127.0.0.1:5244',
  ...over,
});

/** The message copied with a share link: `share_summary_content` (OpenList's template) filled in. */
describe('share summary message', () => {
  it("fills in OpenList's default template for one file, without code or expiry", () => {
    expect(renderSummary(template, data())).toBe('@alice shared "report.txt" from Atrium: http://127.0.0.1:5244/@s/AbC123');
  });

  it('counts the other files, and adds the code and the expiry', () => {
    const expires = '2030-01-02T03:04:05.000Z';
    const text = renderSummary(template, data({ files: ['/a/one', '/b/two/', '/c/three.txt'], pwd: 's3cret', expires }));
    expect(text).toBe(`@alice shared "one" and 2 more files from Atrium: http://127.0.0.1:5244/@s/AbC123 , the share code is s3cret, please access before ${new Date(expires).toLocaleString()}.`);
  });

  it('reads {{else}}, nested fields it does not know as empty, and never runs code', () => {
    expect(renderSummary('{{#if pwd}}coded{{else}}open{{/if}} {{nope.deeper}}|{{constructor}}|', data())).toBe('open ||');
    expect(renderSummary('{{#each files}}[{{@index}}:{{filename this}}]{{else}}none{{/each}}', data({ files: [] }))).toBe('none');
    expect(renderSummary('{{#each files}}{{#unless (eq @index 0)}}x{{/unless}}{{/each}}', data({ files: ['a', 'b', 'c'] }))).toBe('xx');
  });
});
