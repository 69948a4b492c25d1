// Loads the English strings into the UI's catalog, as the page does, so
// that tests see the texts a learner reads.
import { readFileSync } from 'node:fs';
import { Catalog, useCatalog } from '../static/js/i18n.js';

useCatalog(new Catalog('en', JSON.parse(readFileSync(new URL('../static/i18n/en.json', import.meta.url), 'utf8'))));

// serveLanguages answers the page's fetch of a language's strings
// (i18n.js setLanguage) from web/static/i18n, as the server would.
export function serveLanguages() {
  globalThis.fetch = async (url) => {
    const code = String(url).match(/i18n\/(\w+)\.json$/)[1];
    const body = readFileSync(new URL(`../static/i18n/${code}.json`, import.meta.url), 'utf8');
    return { ok: true, json: async () => JSON.parse(body) };
  };
}
