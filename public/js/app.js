// Behaviour every page shares. No inline scripts anywhere: the CSP allows only files from this site.
'use strict';

// Chromium applies `autofocus` at its next rendering, which can come after the page has loaded: a
// barcode scan or typing arriving in between would go nowhere.
if (document.activeElement === document.body) document.querySelector('[autofocus]')?.focus();

// A button that cannot be undone asks first: its data-confirm holds the question (the lots' Write off,
// the notes' Delete, the items' Delete and barcodes' Remove, a request's Cancel). Cancelling keeps
// the form unsent; without script the form just submits. Only this file listens, or a page would ask twice.
document.addEventListener('submit', (event) => {
  const question = event.submitter && event.submitter.dataset.confirm;
  if (question && !window.confirm(question)) event.preventDefault();
});

// An alert swapped into the page is read out by its role; bring it into view as well.
document.addEventListener('htmx:afterSwap', (event) => {
  if (event.detail.target.id === 'alerts' && event.detail.target.textContent.trim()) {
    event.detail.target.scrollIntoView({ block: 'nearest' });
  }
});

// A new action clears the previous action's alert. A lookup (a GET, such as the counter's name
// matches still arriving after a refused scan) leaves it, or the refusal would vanish unread.
document.addEventListener('htmx:beforeRequest', (event) => {
  if (event.detail.requestConfig && event.detail.requestConfig.verb === 'get') return;
  const alerts = document.getElementById('alerts');
  if (alerts) alerts.replaceChildren();
});

// The header's menus (the phone's Menu and the areas' menus in it) close as menus do: on Escape
// (the innermost, focus back on its summary) and on a click elsewhere.
const OPEN_MENUS = 'details.site-menu[open], details.nav-menu[open]';
document.addEventListener('keydown', (event) => {
  const menu = event.key === 'Escape' && document.activeElement?.closest(OPEN_MENUS);
  if (!menu) return;
  menu.open = false;
  menu.querySelector('summary').focus();
});
document.addEventListener('click', (event) => {
  for (const menu of document.querySelectorAll(OPEN_MENUS)) if (!menu.contains(event.target)) menu.open = false;
});
