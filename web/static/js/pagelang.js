// The language of a page the server renders in English (the landing
// page): it says the page in the visitor's language (their earlier choice,
// else the browser's), and again in the one they pick in its #lang select;
// the choice is the lab's too (i18n.js keeps it). ready settles once the
// page speaks its language, so that scripts writing texts of their own
// (landing.js) write them in it.

import { chosenLanguage, lang, onLanguageChange, setLanguage } from './i18n.js';

const base = new URL('../', import.meta.url).href;
const select = document.getElementById('lang');
const available = select ? [...select.options].map((o) => o.value) : ['en'];

export const ready = setLanguage(chosenLanguage(available), { base }).catch((e) => console.error(e));

if (select) {
  ready.then(() => { select.value = lang(); });
  select.addEventListener('change', () => setLanguage(select.value, { base, remember: true }).catch((e) => console.error(e)));
  onLanguageChange((code) => { select.value = code; });
}
