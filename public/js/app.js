// Behaviour every page shares. No inline scripts anywhere: the CSP allows only files from this site.
'use strict';

// An alert swapped into the page is read out by its role; bring it into view as well.
document.addEventListener('htmx:afterSwap', (event) => {
  if (event.detail.target.id === 'alerts' && event.detail.target.textContent.trim()) {
    event.detail.target.scrollIntoView({ block: 'nearest' });
  }
});

// A new htmx request clears the previous request's alert.
document.addEventListener('htmx:beforeRequest', () => {
  const alerts = document.getElementById('alerts');
  if (alerts) alerts.replaceChildren();
});
