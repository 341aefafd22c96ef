// The settings pages' behaviour: the new MCP key's Copy button. Without script the key is selected and copied by hand.
'use strict';

// Run once the page is parsed (this script is deferred): the button shows only where it can act.
for (const button of document.querySelectorAll('[data-copy]')) {
  const field = document.getElementById(button.dataset.copy);
  const status = document.getElementById(button.dataset.copyStatus);
  button.hidden = false;
  button.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(field.value);
      status.textContent = 'Copied';
    } catch {
      // the clipboard refused (no permission, or not a secure context): leave the key selected for Ctrl+C
      field.select();
      status.textContent = 'The key is selected: press Ctrl+C to copy it';
    }
  });
}
