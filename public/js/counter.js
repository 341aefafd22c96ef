// The counter: a barcode scanner types a SKU and presses Enter. Its keyboard behaviour lives here
// (the CSP allows no inline script and htmx evaluates nothing).
'use strict';

(() => {
  const scanInput = () => document.getElementById('scan-sku');
  const listbox = () => document.getElementById('sku-matches');
  const options = () => Array.from(listbox()?.querySelectorAll('[role="option"]') ?? []);
  // SKUs submitted, oldest first, for scans htmx may still hold in its queue: each request takes its own
  // when it leaves, so the scan box can be emptied at once for the next scan.
  const pendingSkus = [];

  // Buttons only a form post without JavaScript needs (changes are saved as they happen).
  document.documentElement.classList.add('js');

  function closeMatches() {
    const box = listbox();
    const input = scanInput();
    if (box) {
      box.hidden = true;
      box.replaceChildren();
    }
    if (input) {
      input.setAttribute('aria-expanded', 'false');
      input.removeAttribute('aria-activedescendant');
    }
  }

  function activate(option) {
    for (const each of options()) each.setAttribute('aria-selected', String(each === option));
    scanInput().setAttribute('aria-activedescendant', option.id);
    option.scrollIntoView({ block: 'nearest' });
  }

  function submitScan(sku) {
    scanInput().value = sku;
    document.getElementById('scan-form').requestSubmit();
  }

  // Capture phase: before htmx reads the form.
  document.addEventListener(
    'submit',
    (event) => {
      if (event.target.id !== 'scan-form' || !window.htmx) return;
      const input = scanInput();
      const sku = input.value.trim();
      if (!sku) {
        event.preventDefault();
        event.stopPropagation();
        return;
      }
      pendingSkus.push(sku);
      input.value = '';
      closeMatches();
      input.focus();
    },
    true,
  );

  document.addEventListener('htmx:configRequest', (event) => {
    if (event.detail.elt.id === 'scan-form') event.detail.parameters.sku = pendingSkus.shift() ?? '';
  });

  // Name matches: only for two characters or more, and never once the box was emptied by a scan.
  document.addEventListener('htmx:confirm', (event) => {
    if (event.detail.elt.id === 'scan-sku' && scanInput().value.trim().length < 2) {
      event.preventDefault();
      closeMatches();
    }
  });
  document.addEventListener('htmx:beforeSwap', (event) => {
    if (event.detail.requestConfig?.elt?.id === 'scan-sku' && scanInput().value.trim().length < 2) event.detail.shouldSwap = false;
  });
  document.addEventListener('htmx:afterSwap', (event) => {
    if (event.detail.requestConfig?.elt?.id !== 'scan-sku') return;
    const open = options().length > 0;
    scanInput().setAttribute('aria-expanded', String(open));
    scanInput().removeAttribute('aria-activedescendant');
  });

  document.addEventListener('keydown', (event) => {
    const input = scanInput();
    if (event.target !== input) return;
    const list = options();
    if (list.length === 0 || listbox().hidden) return;
    const current = list.findIndex((option) => option.getAttribute('aria-selected') === 'true');
    if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
      event.preventDefault();
      const step = event.key === 'ArrowDown' ? 1 : -1;
      activate(list[(current + step + list.length) % list.length]);
    } else if (event.key === 'Escape') {
      event.preventDefault();
      closeMatches();
    } else if (event.key === 'Enter' && current >= 0) {
      // the form's own submission then adds the chosen item
      input.value = list[current].dataset.sku;
    }
  });

  document.addEventListener('click', (event) => {
    const option = event.target.closest?.('#sku-matches [role="option"]');
    if (option) submitScan(option.dataset.sku);
  });

  // Enter in a field saved on change saves it once, as leaving it does (the browser would submit its form as well).
  document.addEventListener('keydown', (event) => {
    if (event.key !== 'Enter' || !event.target.matches?.('#charge-code, .quantity-form input[name="quantity"]')) return;
    event.preventDefault();
    event.target.blur();
    event.target.focus();
  });
})();
