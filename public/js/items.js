// The items pages' behaviour. Everything here is a convenience: each form works without it.
'use strict';

// "Select every item on this page" needs script to act, so it is shown only once script runs, and again after htmx swaps the rows.
function revealSelectAll() {
  for (const box of document.querySelectorAll('[data-select-all]')) box.hidden = false;
}
document.addEventListener('DOMContentLoaded', revealSelectAll);
document.addEventListener('htmx:afterSwap', revealSelectAll);

document.addEventListener('change', (event) => {
  const box = event.target;
  if (!(box instanceof HTMLInputElement)) return;
  const table = box.closest('table');
  if (!table) return;
  const rows = table.querySelectorAll('tbody input[type="checkbox"][name="itemIds"]');
  if (box.matches('[data-select-all]')) {
    for (const row of rows) row.checked = box.checked;
  } else if (box.name === 'itemIds') {
    const all = table.querySelector('[data-select-all]');
    if (all) all.checked = [...rows].every((row) => row.checked);
  }
});
