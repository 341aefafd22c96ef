// The replenishment page's totals follow what is typed and ticked: a line's total is its quantity
// x unit price, a supplier's the sum of its ticked lines, the overall total the sum of those. The
// form posts the same quantities without this script; the totals are then the suggestion's.
'use strict';

// A quantity as the API takes it (at most two decimals); anything else has no total.
const QUANTITY = /^\d+(\.\d{1,2})?$/;

// Amounts in whole pence as BigInt, as the server computes them in decimals: no float drift.
const hundredths = (text) => {
  const [whole, fraction = ''] = text.split('.');
  return BigInt(whole) * 100n + BigInt((fraction + '00').slice(0, 2));
};
// quantity (hundredths) x unit price (pence), back to pence rounded half up
const linePence = (quantity, unitPrice) => (hundredths(quantity) * hundredths(unitPrice) + 50n) / 100n;
const pounds = (pence) =>
  `£${(pence / 100n).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ',')}.${(pence % 100n).toString().padStart(2, '0')}`;

function updateTotals() {
  let overall = 0n;
  for (const group of document.querySelectorAll('[data-supplier-group]')) {
    let supplier = 0n;
    for (const row of group.querySelectorAll('tr[data-unit-price]')) {
      const typed = row.querySelector('input.quantity').value.trim();
      const total = QUANTITY.test(typed) ? linePence(typed, row.dataset.unitPrice) : null;
      row.querySelector('[data-line-total]').textContent = total === null ? '—' : pounds(total);
      if (total !== null && row.querySelector('input[type="checkbox"]').checked) supplier += total;
    }
    group.querySelector('[data-supplier-total]').textContent = pounds(supplier);
    overall += supplier;
  }
  const grandTotal = document.getElementById('grand-total');
  if (grandTotal) grandTotal.textContent = pounds(overall);
}

document.addEventListener('input', updateTotals);
document.addEventListener('change', updateTotals);
// a form shown again after a refusal holds what was typed: its totals follow it from the start
document.addEventListener('DOMContentLoaded', updateTotals);
