// The orders pages' behaviour. Everything here is a convenience: each form works without it
// (a line is ordered by typing its SKU; the search button searches by posting the form).
'use strict';

// "Add <item>" buttons beside a search's matches need script to act, so they are shown only once it runs.
function revealAddButtons() {
  for (const button of document.querySelectorAll('[data-use-sku]')) button.hidden = false;
}
document.addEventListener('DOMContentLoaded', revealAddButtons);
document.addEventListener('htmx:afterSwap', revealAddButtons);

// Adding a found item fills the first empty line with its SKU (and its price as the unit cost
// when none is typed), then moves to its quantity.
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
  const cost = row.querySelector('.line-unitCost');
  if (cost.value.trim() === '') cost.value = button.dataset.unitCost;
  row.querySelector('.line-quantity').focus();
});
