// The web UI's dictionaries for tests. They are loaded by path at run time: the web sources
// belong to the web project (web/tsconfig.json, bundler resolution), not to this one.
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const load = (file: string) => import(pathToFileURL(path.resolve('web/src', file)).href);

export type Dictionary = Record<string, string>;

export async function webI18n(): Promise<{ english: Dictionary; fields: Dictionary; pickLanguage: (stored: string | null, browser: readonly string[]) => string; languages: string[] }> {
  const i18n = await load('i18n.ts');
  const fields = await load('fieldsEn.ts');
  return { english: i18n.englishDictionary(), fields: fields.FIELDS_EN, pickLanguage: i18n.pickLanguage, languages: (i18n.LANGUAGES as Array<[string, string]>).map(([c]) => c) };
}

export async function webLocale(lang: string): Promise<Dictionary> {
  return (await load(`locales/${lang}.ts`)).default;
}
