// Loads the English strings into the UI's catalog, as the page does, so
// that tests see the texts a learner reads.
import { readFileSync } from 'node:fs';
import { Catalog, useCatalog } from '../static/js/i18n.js';

useCatalog(new Catalog('en', JSON.parse(readFileSync(new URL('../static/i18n/en.json', import.meta.url), 'utf8'))));
