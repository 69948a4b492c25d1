// The lab's languages. Every UI string lives in a per-language file,
// web/static/i18n/<lang>.json: a flat map from key to text with {name}
// placeholders, and "_name" (the language's own name). English is complete
// and is the fallback for a key another language lacks. Adding a language
// is adding its file (and its lesson texts): the server lists the files it
// embeds in the page's configuration (LabConfig.languages).
//
// A key may have plural forms, "key.one" / "key.other" (the categories of
// Intl.PluralRules); t(key, {n}) picks the form for n.

export const FALLBACK = 'en';
const STORAGE_KEY = 'rvplay.lang';

// negotiate picks the first available language matching the preferences
// (navigator.languages): an exact tag first ("zh-TW" if there is one), then
// the primary subtag ("zh-CN" -> "zh").
export function negotiate(preferred, available, fallback = FALLBACK) {
  const have = new Map(available.map((a) => [a.toLowerCase(), a]));
  for (const p of preferred || []) {
    if (!p) continue;
    const tag = String(p).toLowerCase();
    if (have.has(tag)) return have.get(tag);
    const primary = tag.split('-')[0];
    if (have.has(primary)) return have.get(primary);
  }
  return have.get(fallback) || available[0] || fallback;
}

// format replaces {name} placeholders; an unknown one stays as written, so a
// missing parameter shows up instead of silently vanishing.
export function format(text, params) {
  if (!params) return text;
  return text.replace(/\{(\w+)\}/g, (m, k) => (Object.hasOwn(params, k) && params[k] !== undefined ? String(params[k]) : m));
}

// Catalog answers t(key, params) for one language with a fallback catalog.
export class Catalog {
  constructor(lang, strings, fallback = null) {
    this.lang = lang;
    this.strings = strings || {};
    this.fallback = fallback;
    this.plural = new Intl.PluralRules(lang);
  }

  has(key) { return Object.hasOwn(this.strings, key) || Object.hasOwn(this.strings, key + '.other'); }

  lookup(key, params) {
    if (params && typeof params.n === 'number') {
      const form = `${key}.${this.plural.select(params.n)}`;
      if (Object.hasOwn(this.strings, form)) return this.strings[form];
      if (Object.hasOwn(this.strings, key + '.other')) return this.strings[key + '.other'];
    }
    if (Object.hasOwn(this.strings, key)) return this.strings[key];
    return undefined;
  }

  t(key, params) {
    const s = this.lookup(key, params) ?? this.fallback?.lookup(key, params);
    return s === undefined ? key : format(s, params);
  }
}

// The page's current catalog. Modules call t() at render time.
let current = new Catalog(FALLBACK, {});
const listeners = new Set();

export const t = (key, params) => current.t(key, params);
// useCatalog makes a catalog current without fetching (tests, build tools).
export function useCatalog(cat) { current = cat; }
export const lang = () => current.lang;
export function onLanguageChange(fn) { listeners.add(fn); return () => listeners.delete(fn); }

async function fetchStrings(base, code) {
  const r = await fetch(`${base}i18n/${code}.json`);
  if (!r.ok) throw new Error(`language ${code}: ${r.status}`);
  return r.json();
}

// setLanguage loads a language's strings (and English for the fallback),
// makes them current, translates the page and tells the panels.
export async function setLanguage(code, { base, remember = false, root = document } = {}) {
  const en = current.lang === FALLBACK && Object.keys(current.strings).length ? current : new Catalog(FALLBACK, await fetchStrings(base, FALLBACK));
  const cat = code === FALLBACK ? en : new Catalog(code, await fetchStrings(base, code), en);
  current = cat;
  if (remember) {
    try { localStorage.setItem(STORAGE_KEY, code); } catch { /* storage disabled */ }
  }
  if (root) {
    root.documentElement.lang = code;
    translate(root);
  }
  for (const fn of listeners) fn(code);
  return cat;
}

// chosenLanguage is the learner's earlier choice, else the browser's.
export function chosenLanguage(available) {
  let saved = null;
  try { saved = localStorage.getItem(STORAGE_KEY); } catch { /* storage disabled */ }
  if (saved && available.includes(saved)) return saved;
  return negotiate(globalThis.navigator?.languages || [], available);
}

// translate applies the catalog to the server-rendered page: an element's
// data-i18n names the key of its text, data-i18n-attr lists attributes as
// "title=key;aria-label=key".
export function translate(root = document) {
  for (const e of root.querySelectorAll('[data-i18n]')) e.textContent = t(e.dataset.i18n);
  for (const e of root.querySelectorAll('[data-i18n-attr]')) {
    for (const pair of e.dataset.i18nAttr.split(';')) {
      const [attr, key] = pair.split('=');
      if (attr && key) e.setAttribute(attr.trim(), t(key.trim()));
    }
  }
}
