// The counter: a barcode scanner types a SKU and presses Enter. Its keyboard behaviour lives here
// (the CSP allows no inline script and htmx evaluates nothing).
'use strict';

(() => {
  /**
   * A keyboard-wedge scanner types a whole code a few milliseconds a key and ends it with Enter, into
   * whatever has the focus. People leave more than this between keys (60 ms and up even when fast).
   * Key events carry the time the key was pressed, so a browser busy with a swap does not stretch a burst.
   */
  const SCAN_KEY_GAP_MS = 50;
  /** Shorter bursts ended by Enter are left to the field they were typed in. */
  const SCAN_MIN_LENGTH = 3;
  /** How many scans the log keeps on the page. */
  const SCAN_LOG_LENGTH = 30;
  const MODIFIER_KEYS = new Set(['Shift', 'Control', 'Alt', 'AltGraph', 'Meta', 'CapsLock']);
  /**
   * A GS1 string's FNC1 separator (issue 42): a wedge scanner sends it as the GS character, or as Ctrl+]
   * when set up so. It ends a variable-length field such as the lot (10), so it must reach the server.
   */
  const GS = '\x1d';
  const isGs = (event) => event.key === GS || (event.ctrlKey && !event.altKey && !event.metaKey && event.key === ']');

  const scanInput = () => document.getElementById('scan-sku');
  const scanForm = () => document.getElementById('scan-form');
  const listbox = () => document.getElementById('sku-matches');
  const options = () => Array.from(listbox()?.querySelectorAll('[role="option"]') ?? []);
  // Scans submitted, oldest first, for the requests htmx may still hold in its queue (each takes its
  // own when it leaves), then sent and awaiting their answer (one at a time: the counter's requests queue).
  const pendingScans = [];
  const sentScans = [];
  // Set while counter.js itself submits a scan it queued, so the submit handler does not read the scan box.
  let submittingQueued = false;

  // Buttons only a form post without JavaScript needs (changes are saved as they happen).
  document.documentElement.classList.add('js');
  const scanLogSection = document.getElementById('scan-log');
  if (scanLogSection) scanLogSection.hidden = false;

  const isTextField = (element) =>
    element instanceof HTMLTextAreaElement ||
    (element instanceof HTMLInputElement &&
      ['text', 'search', 'email', 'password', 'tel', 'url', 'number'].includes(element.type));

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

  /** Sends a scan to the basket; htmx queues it behind any request of the counter still answering. */
  function queueScan(sku) {
    if (!window.htmx) {
      // htmx missing: the form's own post (the page without JavaScript) adds it
      scanInput().value = sku;
      scanForm().requestSubmit();
      return;
    }
    pendingScans.push(sku);
    submittingQueued = true;
    try {
      scanForm().requestSubmit();
    } finally {
      submittingQueued = false;
    }
  }

  // ---- Scanner bursts, wherever the focus is ----

  // The keys of the burst being typed into a field other than the scan box, with each field they fell
  // into and its value and caret before. The scan box keeps its own: Enter there adds what it holds.
  let burst = null;

  function noteBurstKey(event, key) {
    if (!burst || event.timeStamp - burst.lastAt > SCAN_KEY_GAP_MS) burst = { text: '', lastAt: 0, fields: new Map() };
    const field = event.target;
    if (!burst.fields.has(field))
      burst.fields.set(field, { value: field.value, start: field.selectionStart, end: field.selectionEnd });
    burst.text += key;
    burst.lastAt = event.timeStamp;
  }

  const endsScan = (event) =>
    event.key === 'Enter' &&
    burst !== null &&
    burst.text.trim().length >= SCAN_MIN_LENGTH &&
    event.timeStamp - burst.lastAt <= SCAN_KEY_GAP_MS;

  // A field whose text counter.js put back no longer reports the person's edit when they leave it (the
  // browser reports only typing): counter.js reports it, once, unless the browser did.
  const owesChange = new WeakSet();
  function putBack(field, { value, start, end }) {
    field.value = value;
    if (typeof start === 'number') field.setSelectionRange(start, end);
    if (value === field.defaultValue) owesChange.delete(field);
    else owesChange.add(field);
  }
  document.addEventListener('change', (event) => owesChange.delete(event.target), true);
  document.addEventListener('focusout', (event) => {
    if (owesChange.delete(event.target)) event.target.dispatchEvent(new Event('change', { bubbles: true }));
  });

  /** A burst's keys come out of the fields they fell into, which get their value and caret back. */
  function takeBurst() {
    const { text, fields } = burst;
    burst = null;
    for (const [field, before] of fields) if (field.isConnected) putBack(field, before);
    return text.trim();
  }

  /** A key typed where nothing takes text (a button, a checkbox, the page) goes into the scan box instead of being lost. */
  function typeIntoScanBox(event, key) {
    const input = scanInput();
    event.preventDefault();
    input.focus();
    input.value += key;
    input.dispatchEvent(new Event('input', { bubbles: true }));
  }

  // Capture phase on the document: before any field, form or htmx sees the key.
  document.addEventListener(
    'keydown',
    (event) => {
      if (event.isComposing || MODIFIER_KEYS.has(event.key)) return;
      const target = event.target;
      const inScanBox = target === scanInput();
      const gs = isGs(event);
      if (gs && inScanBox) {
        // a text box may drop a control character: the GS is written into the scan box itself
        event.preventDefault();
        target.setRangeText(
          GS,
          target.selectionStart ?? target.value.length,
          target.selectionEnd ?? target.value.length,
          'end',
        );
        return;
      }
      const key = gs ? GS : event.key;
      const printable =
        gs || (event.key.length === 1 && !event.ctrlKey && !event.metaKey && !event.altKey && !event.repeat);
      if (printable && !inScanBox && isTextField(target)) {
        if (gs) event.preventDefault();
        noteBurstKey(event, key);
        return;
      }
      // Space on a button or a checkbox presses it.
      if (printable && event.key !== ' ' && !inScanBox && !target.isContentEditable) {
        burst = null;
        typeIntoScanBox(event, key);
        return;
      }
      if (printable) return;
      if (endsScan(event)) {
        event.preventDefault();
        event.stopImmediatePropagation();
        queueScan(takeBurst());
        return;
      }
      burst = null;
    },
    true,
  );

  // ---- The scan form: Enter or Add with a SKU typed by hand, a match chosen, or a queued scan ----

  // Capture phase: before htmx reads the form.
  document.addEventListener(
    'submit',
    (event) => {
      if (event.target.id !== 'scan-form' || !window.htmx || submittingQueued) return;
      const input = scanInput();
      const sku = input.value.trim();
      if (!sku) {
        event.preventDefault();
        event.stopPropagation();
        return;
      }
      pendingScans.push(sku);
      input.value = '';
      closeMatches();
      input.focus();
    },
    true,
  );

  document.addEventListener('htmx:configRequest', (event) => {
    if (event.detail.elt.id !== 'scan-form') return;
    const sku = pendingScans.shift() ?? '';
    sentScans.push(sku);
    event.detail.parameters.sku = sku;
  });

  // ---- The scan log: each scan's result, newest first; refusals marked ----

  const textOf = (html) => new DOMParser().parseFromString(html, 'text/html').body.textContent.trim();

  function logScan(sku, refusal, added) {
    const list = document.getElementById('scan-log-entries');
    if (!list) return;
    const entry = document.createElement('li');
    const mark = document.createElement('span');
    mark.className = refusal ? 'badge danger' : 'badge ok';
    mark.textContent = refusal ? 'Refused' : 'Added';
    const code = document.createElement('span');
    code.className = 'scan-sku';
    // a GS1 scan's separators shown as the symbol for GS
    code.textContent = sku.replaceAll(GS, '\u241d');
    const result = document.createElement('span');
    result.className = 'scan-result';
    result.textContent = refusal ?? added;
    entry.className = refusal ? 'refused' : 'added';
    entry.append(mark, ' ', code, ' ', result);
    list.prepend(entry);
    trimLog(list);
  }

  /** The oldest entries go, but never the last sale's: it stays until the next sale is processed. */
  function trimLog(list) {
    const removable = Array.from(list.children).filter((entry) => !entry.classList.contains('last-sale'));
    while (list.children.length > SCAN_LOG_LENGTH && removable.length > 0) removable.pop().remove();
  }

  /** A sale just processed joins the log (its number, total and a link to it), from the line its panel holds. */
  function logSale() {
    const template = document.getElementById('sale-log-entry');
    const list = document.getElementById('scan-log-entries');
    if (!template || !list) return;
    for (const earlier of list.querySelectorAll('.last-sale')) earlier.classList.remove('last-sale');
    list.prepend(template.content.cloneNode(true));
    // logged once, however many times the swap is reported
    template.remove();
    trimLog(list);
  }
  logSale();

  /**
   * What the basket now holds of the scan: the line the server marked as the scan's (a GS1 scan names
   * its item by GTIN and may name a lot), else the line of the scanned SKU (SKUs match whatever their
   * case, as the server's lookup does).
   */
  function basketLineOf(sku) {
    const rows = Array.from(document.querySelectorAll('#basket tbody tr'));
    const row =
      rows.find((each) => each.hasAttribute('data-scanned')) ??
      rows.find((each) => each.querySelector('.sku')?.textContent.trim().toLowerCase() === sku.toLowerCase());
    if (!row) return 'added to the basket';
    const name = row.querySelector('.item-name')?.textContent.trim();
    const lot = row.dataset.lot ? `, lot ${row.dataset.lot}` : '';
    const quantity = row.querySelector('input[name="quantity"]')?.value;
    return `${name}${lot}: ${quantity} in the basket`;
  }

  document.addEventListener('htmx:afterRequest', (event) => {
    if (event.detail.elt.id !== 'scan-form') return;
    const sku = sentScans.shift() ?? '';
    const { status, responseText } = event.detail.xhr;
    if (status >= 200 && status < 300) {
      logScan(sku, null, basketLineOf(sku));
      // A new basket has started: the last sale's panel has done its work.
      document.getElementById('sale-result')?.remove();
    } else if ([400, 404, 409, 422].includes(status)) {
      logScan(sku, textOf(responseText), null);
    } else {
      logScan(
        sku,
        status ? `Not added: the server answered ${status}` : 'Not added: the server could not be reached',
        null,
      );
    }
  });

  // A field being edited (a quantity) inside what an answer replaces keeps its text and caret in the new
  // copy when the answer is not for that very text (a scan, the notes saved, or typing since it was sent).
  let fieldInEdit = null;
  document.addEventListener('htmx:beforeSwap', (event) => {
    const field = document.activeElement;
    const { target, requestConfig } = event.detail;
    const answersItsText =
      field?.form && requestConfig?.elt === field.form && requestConfig.parameters?.[field.name] === field.value;
    fieldInEdit =
      isTextField(field) && field.id && target.id !== 'counter' && target.contains(field) && !answersItsText
        ? { id: field.id, value: field.value, start: field.selectionStart, end: field.selectionEnd }
        : null;
  });

  // A sale processed or the basket cleared (the counter replaced), or a swap that took the focused
  // control away: the scan box has the focus for the next scan.
  document.addEventListener('htmx:afterSwap', (event) => {
    const edited = fieldInEdit && document.getElementById(fieldInEdit.id);
    if (isTextField(edited)) {
      edited.focus({ preventScroll: true });
      putBack(edited, fieldInEdit);
      fieldInEdit = null;
      return;
    }
    fieldInEdit = null;
    if (event.detail.target.id === 'counter') logSale();
    const lost = !document.activeElement || document.activeElement === document.body;
    if (lost || event.detail.target.id === 'counter') scanInput()?.focus({ preventScroll: true });
  });

  // ---- Issue 43: the COSHH assessment reference ----

  // The field follows the basket (a line needing a COSHH assessment shows it) without being replaced, so
  // what was typed in it stays. A refused reference's message arrives beside it; the focus is left where
  // it is (moving it could split a scan being typed).
  document.addEventListener('htmx:afterSwap', (event) => {
    const target = event.detail.target;
    const field = document.getElementById('coshh-field');
    if (!field) return;
    if (target.id === 'basket') {
      const basket = document.getElementById('basket');
      field.hidden = basket?.dataset.needsCoshh !== 'true';
    } else if (target.id === 'coshh-reference-error') {
      document.getElementById('coshh-reference')?.setAttribute('aria-invalid', 'true');
    }
  });

  // ---- Name matches ----

  // Only for two characters or more, and never once the box was emptied by a scan.
  document.addEventListener('htmx:confirm', (event) => {
    if (event.detail.elt.id === 'scan-sku' && scanInput().value.trim().length < 2) {
      event.preventDefault();
      closeMatches();
    }
  });
  document.addEventListener('htmx:beforeSwap', (event) => {
    if (event.detail.requestConfig?.elt?.id === 'scan-sku' && scanInput().value.trim().length < 2)
      event.detail.shouldSwap = false;
  });
  // Typing after choosing with the arrow keys asks again: Enter adds what the box holds, not the old choice.
  document.addEventListener('input', (event) => {
    if (event.target !== scanInput()) return;
    for (const option of options()) option.setAttribute('aria-selected', 'false');
    scanInput().removeAttribute('aria-activedescendant');
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
    if (!option) return;
    scanInput().value = '';
    closeMatches();
    queueScan(option.dataset.sku);
  });

  // Enter in a field saved on change saves it once, as leaving it does (the browser would submit its form as well).
  document.addEventListener('keydown', (event) => {
    if (event.key !== 'Enter' || !event.target.matches?.('#charge-code, .quantity-form input[name="quantity"]')) return;
    event.preventDefault();
    event.target.blur();
    event.target.focus();
  });
})();
