// My account: the new API token's copy button. The token can also be selected and copied by hand.
'use strict';

// The button needs script to act, so it is shown only once script runs.
for (const button of document.querySelectorAll('[data-copy]')) button.hidden = false;

document.addEventListener('click', async (event) => {
  const button = event.target instanceof Element && event.target.closest('[data-copy]');
  if (!button) return;
  const field = document.getElementById(button.dataset.copy);
  const status = button.parentElement.querySelector('[data-copy-status]');
  field.select();
  try {
    await navigator.clipboard.writeText(field.value);
    status.textContent = 'Copied';
  } catch {
    // the browser refused the clipboard (no permission): the token is selected, ready to copy by hand
    status.textContent = 'Selected: press Ctrl+C (or ⌘C) to copy';
  }
});
