// The orders pages' behaviour. Everything here is a convenience: each form works without it
// (a line is ordered by typing its SKU; the search button searches by posting the form).
'use strict';

// "Add <item>" buttons beside a search's matches need script to act, so they are shown only once it runs.
function revealAddButtons() {
  for (const button of document.querySelectorAll('[data-use-sku]')) button.hidden = false;
}
document.addEventListener('DOMContentLoaded', revealAddButtons);
document.addEventListener('htmx:afterSwap', revealAddButtons);

// Adding a found item fills the first empty line with its SKU, name and expected unit cost (the preferred
// supplier's price, else the last paid: never the item's price, which is what the stores charge), then
// moves to its quantity.
document.addEventListener('click', (event) => {
  const button = event.target instanceof Element ? event.target.closest('[data-use-sku]') : null;
  if (!button) return;
  const row = [...document.querySelectorAll('table.order-lines tbody tr')].find((tr) =>
    [...tr.querySelectorAll('input')].every((input) => input.value.trim() === ''),
  );
  if (!row) {
    document.querySelector('button[value="more"]')?.focus();
    return;
  }
  row.querySelector('.line-sku').value = button.dataset.useSku;
  row.querySelector('.line-name').value = button.dataset.useName;
  row.querySelector('.line-unitCost').value = button.dataset.useCost;
  row.querySelector('.line-quantity').focus();
});

// Enter in the item search searches (htmx's "search" trigger) rather than submitting the order,
// which is what Enter does in the form's other fields.
document.addEventListener('keydown', (event) => {
  if (event.key !== 'Enter' || !(event.target instanceof HTMLInputElement) || event.target.name !== 'q') return;
  event.preventDefault();
  window.htmx.trigger(event.target, 'search');
});
