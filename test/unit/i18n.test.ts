import { readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { webI18n, webLocale } from '../helpers/web-dictionaries.js';

const { english, fields: FIELDS_EN, pickLanguage, languages } = await webI18n();

const placeholders = (s: string) => [...s.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();

describe('web UI translations', () => {
  const locales = readdirSync(path.resolve('web/src/locales')).map((f) => f.replace(/\.ts$/, ''));

  it('offers every language that has a dictionary, and English', () => {
    expect([...languages].sort()).toEqual(['en', ...locales].sort());
    expect(locales.sort()).toEqual(['de', 'es', 'fr', 'ja', 'zh-CN']);
  });

  for (const lang of ['zh-CN', 'de', 'fr', 'es', 'ja']) {
    it(`${lang}: every English string is translated, with the same placeholders`, async () => {
      const dict = await webLocale(lang);
      // the interface strings and every form label and option name (help texts may stay English)
      const missing = [...Object.keys(english), ...Object.keys(FIELDS_EN).filter((k) => !k.startsWith('h.'))].filter((k) => !dict[k]);
      expect(missing).toEqual([]);
      for (const [k, v] of Object.entries(dict)) {
        const source = english[k] ?? FIELDS_EN[k];
        expect(source, `${lang} has a key English does not: ${k}`).toBeDefined();
        expect(placeholders(v), `${lang} ${k}`).toEqual(placeholders(source!));
      }
    });
  }

  it('picks the stored choice, else the browser language, else English', () => {
    expect(pickLanguage('de', ['fr-FR'])).toBe('de');
    expect(pickLanguage(null, ['fr-CA', 'de'])).toBe('fr');
    expect(pickLanguage(null, ['zh-TW'])).toBe('zh-CN');
    expect(pickLanguage(null, ['ja'])).toBe('ja');
    expect(pickLanguage('xx', ['pt-BR', 'es-MX'])).toBe('es');
    expect(pickLanguage(null, ['pt-BR'])).toBe('en');
  });
});
