// @ts-check
// The page's views (Live, Quality, Charts, SIP, History) as tabs, the search box ("/" or Ctrl+K
// focuses it; it filters the rows of the view shown) and the light/dark theme (the system's unless
// chosen, kept in localStorage). Views other than Live read the server's admin routes while they
// are shown, every few seconds; nothing is fetched for a hidden view.
import { $ } from './dom.js';
import { loadCharts } from './charts.js';
import { loadDialogs } from './ladder.js';
import { loadHistory } from './history.js';
import { loadQuality } from './quality.js';

const THEME_KEY = 'patchbay-console-theme';
const REFRESH_MS = 2000;

/** view name → what refreshes it */
const LOADERS = { quality: loadQuality, charts: loadCharts, sip: loadDialogs, history: loadHistory };
let current = 'live';
let timer = 0;
let onError = (_err) => {};

export function currentView() {
  return current;
}

export function showView(name) {
  current = name;
  for (const tab of document.querySelectorAll('#tabs [data-view]')) {
    const active = tab.getAttribute('data-view') === name;
    tab.classList.toggle('active', active);
    tab.setAttribute('aria-selected', String(active));
  }
  for (const view of document.querySelectorAll('.view')) /** @type {HTMLElement} */ (view).hidden = view.id !== `view-${name}`;
  refresh();
}

/** Counts refreshes: a load that finishes after the view changed does not schedule another. */
let generation = 0;

function refresh() {
  clearTimeout(timer);
  const mine = ++generation;
  const load = LOADERS[current];
  if (!load) return applySearch();
  load()
    .then(applySearch)
    .catch(onError)
    .finally(() => {
      // History changes only when calls end: it is read less often (an open call's detail stays).
      if (mine === generation) timer = window.setTimeout(refresh, current === 'history' ? 3 * REFRESH_MS : REFRESH_MS);
    });
}

/** Hides the rows of the shown view's tables that do not contain the search text. */
export function applySearch() {
  const text = /** @type {HTMLInputElement} */ ($('search')).value.trim().toLowerCase();
  const view = $(`view-${current}`);
  if (!view) return;
  // The timeline has its own filter: the search leaves it alone.
  for (const tr of view.querySelectorAll('tbody tr:not(#timeline tr)')) {
    /** @type {HTMLElement} */ (tr).hidden = text !== '' && !(tr.textContent ?? '').toLowerCase().includes(text);
  }
}

function applyTheme(theme) {
  if (theme === 'light' || theme === 'dark') document.documentElement.dataset.theme = theme;
  else delete document.documentElement.dataset.theme;
  $('theme').textContent = document.documentElement.dataset.theme === 'dark' ? 'Light' : 'Dark';
}

export function startViews(reportError) {
  onError = reportError;
  for (const tab of document.querySelectorAll('#tabs [data-view]')) tab.addEventListener('click', () => showView(tab.getAttribute('data-view') ?? 'live'));
  $('search').addEventListener('input', applySearch);
  $('history-search').addEventListener('submit', (event) => {
    event.preventDefault();
    loadHistory().then(applySearch).catch(reportError);
  });
  document.addEventListener('keydown', (event) => {
    const typing = event.target instanceof HTMLInputElement || event.target instanceof HTMLTextAreaElement || event.target instanceof HTMLSelectElement;
    if ((event.key === '/' && !typing) || (event.key.toLowerCase() === 'k' && (event.ctrlKey || event.metaKey))) {
      event.preventDefault();
      $('search').focus();
    } else if (event.key === 'Escape' && event.target === $('search')) {
      /** @type {HTMLInputElement} */ ($('search')).value = '';
      applySearch();
    } else if (!typing && event.altKey && /^[1-5]$/.test(event.key)) {
      showView(['live', 'quality', 'charts', 'sip', 'history'][Number(event.key) - 1]);
    }
  });
  applyTheme(localStorage.getItem(THEME_KEY));
  $('theme').addEventListener('click', () => {
    const dark = document.documentElement.dataset.theme === 'dark' || (!document.documentElement.dataset.theme && matchMedia('(prefers-color-scheme: dark)').matches);
    const next = dark ? 'light' : 'dark';
    localStorage.setItem(THEME_KEY, next);
    applyTheme(next);
  });
}
