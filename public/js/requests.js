// The catalogue and the requests pages. No inline scripts: the CSP allows only files from this site.
'use strict';

// Print buttons (a picking list): the print stylesheet keeps the list and drops the rest.
document.addEventListener('click', (event) => {
  const button = event.target.closest('[data-print]');
  if (button) window.print();
});

// Print buttons need JavaScript: shown only when it runs.
for (const button of document.querySelectorAll('[data-print]')) button.hidden = false;
