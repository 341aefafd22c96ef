// The stocktake count page: a keyboard-wedge scanner types a code and presses Enter into the scan box,
// which keeps the focus. Each scan counts one more; scans typed while one is being sent wait in a queue
// and go to the server one at a time, in the order they were typed, so none is lost or merged.
// (The CSP allows no inline script.)
'use strict';

(() => {
  const page = document.getElementById('count-page');
  // a posted or cancelled stocktake's count page has no scan box
  if (!page || !document.getElementById('scan-form')) return;

  /** A scanner types a few milliseconds a key; people leave more than this between keys. */
  const SCAN_KEY_GAP_MS = 50;
  /** Shorter bursts ended by Enter are left to the field they were typed in. */
  const SCAN_MIN_LENGTH = 3;
  /** How many scans the list keeps on the page. */
  const SCAN_LOG_LENGTH = 30;
  /** A request that could not reach the server is sent again after this long (the scan keeps its place). */
  const RETRY_MS = 3000;
  const MODIFIER_KEYS = new Set(['Shift', 'Control', 'Alt', 'AltGraph', 'Meta', 'CapsLock']);
  /** The GS (FNC1) a wedge scanner sends between a GS1 scan's variable-length fields, such as a lot (10). */
  const GS = '\x1d';

  const scanForm = document.getElementById('scan-form');
  const scanInput = document.getElementById('scan-code');
  const log = document.getElementById('scan-entries');
  const status = document.getElementById('scan-status');
  const alerts = document.getElementById('alerts');
  const askQuantity = document.getElementById('ask-quantity');
  const csrf = scanForm.querySelector('input[name="_csrf"]').value;

  document.documentElement.classList.add('js');
  for (const hidden of page.querySelectorAll('[data-js-only]')) hidden.hidden = false;
  // "Ask how many after each scan" is remembered on this device.
  const ASK_KEY = 'stocktake.askQuantity';
  if (askQuantity) {
    askQuantity.checked = localStorage.getItem(ASK_KEY) === '1';
    askQuantity.addEventListener('change', () => {
      localStorage.setItem(ASK_KEY, askQuantity.checked ? '1' : '0');
      scanInput.focus();
    });
  }

  // ---- The queue: each job is a form's fields and the log entry its answer replaces ----

  const queue = [];
  let sending = false;

  function announce(message) {
    status.textContent = message;
  }

  function refuse(message) {
    const alert = document.createElement('p');
    alert.className = 'alert';
    alert.textContent = message;
    alerts.replaceChildren(alert);
  }

  function pendingEntry(text) {
    const entry = document.createElement('li');
    entry.className = 'scan-entry pending';
    const badge = document.createElement('span');
    badge.className = 'badge';
    badge.textContent = 'Sending';
    const code = document.createElement('span');
    code.className = 'scan-code';
    code.textContent = text;
    entry.append(badge, ' ', code);
    log.prepend(entry);
    while (log.children.length > SCAN_LOG_LENGTH) log.lastElementChild.remove();
    document.getElementById('scan-log-empty')?.remove();
    return entry;
  }

  function updateWaiting() {
    const waiting = queue.length + (sending ? 1 : 0);
    page.dataset.waiting = String(waiting);
  }

  /**
   * A job: a form's action and fields, the log entry its answer replaces (a scan's "Sending" entry, the
   * scan whose quantity changes), and the button to give back if it is refused (an Undo).
   */
  function enqueue(job) {
    queue.push(job);
    updateWaiting();
    pump();
  }

  /** The answer's parts: the log entry (in place of the one it answers), the last-scan panel and the progress line. */
  function place(html, job) {
    const template = document.createElement('template');
    template.innerHTML = html;
    const entry = template.content.querySelector('li.scan-entry');
    if (entry) {
      const old = job.entry?.isConnected ? job.entry : entry.id && document.getElementById(entry.id);
      if (old) old.replaceWith(entry);
      else log.prepend(entry);
      while (log.children.length > SCAN_LOG_LENGTH) log.lastElementChild.remove();
      // an undone scan's quantity can no longer be changed
      if (entry.hasAttribute('data-undone')) {
        const quantityForm = document.getElementById('quantity-form');
        if (quantityForm?.dataset.entry === entry.id) document.getElementById('last-scan').hidden = true;
      }
    }
    for (const part of template.content.querySelectorAll('[data-replaces]')) {
      const old = document.getElementById(part.dataset.replaces);
      if (old) old.replaceWith(part);
    }
    return entry;
  }

  async function pump() {
    if (sending || queue.length === 0) return;
    sending = true;
    const job = queue[0];
    let response;
    try {
      const body = new URLSearchParams(job.fields);
      body.set('_csrf', csrf);
      response = await fetch(job.action, {
        method: 'POST',
        body,
        headers: { 'HX-Request': 'true', 'X-CSRF-Token': csrf },
        credentials: 'same-origin',
      });
    } catch {
      // The server could not be reached: the job keeps its place and goes again.
      announce(`The server could not be reached; ${queue.length} waiting, trying again`);
      sending = false;
      setTimeout(pump, RETRY_MS);
      return;
    }
    queue.shift();
    const redirect = response.headers.get('HX-Redirect');
    if (redirect) {
      window.location.assign(redirect);
      return;
    }
    const html = await response.text();
    if (response.ok) {
      const entry = place(html, job);
      alerts.replaceChildren();
      announce(entry?.dataset.announce ?? entry?.textContent.trim() ?? 'Counted');
      if (job.scan && askQuantity?.checked && queue.length === 0) focusQuantity();
    } else {
      const entry = html.includes('scan-entry') ? place(html, job) : null;
      const message =
        entry?.dataset.announce ??
        (response.status >= 500
          ? `Not counted: the server answered ${response.status}`
          : new DOMParser().parseFromString(html, 'text/html').body.textContent.trim());
      if (!entry && job.entry?.isConnected) {
        job.entry.classList.replace('pending', 'refused');
        job.entry.querySelector('.badge').textContent = 'Not counted';
        job.entry.append(' ', message);
      }
      if (job.button) job.button.disabled = false;
      refuse(message);
      // a lot-tracked item scanned without its lot: its lot field takes the focus (a GS1 scan there still counts)
      const askLot = entry?.querySelector('[data-asks-lot] input[name="lotNumber"]');
      if (askLot && queue.length === 0) askLot.focus();
    }
    sending = false;
    updateWaiting();
    pump();
  }

  // ---- The scan box ----

  function queueScan(code) {
    const trimmed = code.trim();
    if (!trimmed) return;
    enqueue({ action: scanForm.action, fields: { code: trimmed }, entry: pendingEntry(trimmed), scan: true });
  }

  scanForm.addEventListener('submit', (event) => {
    event.preventDefault();
    const code = scanInput.value;
    scanInput.value = '';
    scanInput.focus();
    queueScan(code);
  });

  // The quantity of the last scan, an Undo: their forms go through the same queue, in order with the scans.
  page.addEventListener('submit', (event) => {
    const form = event.target;
    if (form === scanForm || !form.matches('form[data-queued]')) return;
    event.preventDefault();
    const fields = Object.fromEntries(new FormData(form));
    delete fields._csrf;
    const button = form.querySelector('button');
    if (form.dataset.queued === 'undo') button.disabled = true;
    // the entry its answer replaces: the one named, else the entry the form is in (an Undo, a lot asked for)
    const entry = form.dataset.entry ? document.getElementById(form.dataset.entry) : form.closest('li.scan-entry');
    enqueue({ action: form.action, fields, entry, button });
    scanInput.focus();
  });

  function focusQuantity() {
    const input = document.getElementById('scan-quantity');
    if (!input) return;
    input.focus();
    input.select();
  }

  // ---- Keys: a scanner's burst is a scan wherever the focus is; stray keys go to the scan box ----

  let burst = null;
  const isTextField = (element) =>
    element instanceof HTMLTextAreaElement ||
    (element instanceof HTMLInputElement &&
      ['text', 'search', 'number', 'tel', 'email', 'url', 'password'].includes(element.type));

  document.addEventListener(
    'keydown',
    (event) => {
      if (event.isComposing || MODIFIER_KEYS.has(event.key)) return;
      const target = event.target;
      const inScanBox = target === scanInput;
      if (inScanBox && event.key === GS) {
        // a text box may drop a control character: the GS is written into the scan box itself, as it ends a lot
        event.preventDefault();
        scanInput.setRangeText(GS, scanInput.selectionStart, scanInput.selectionEnd, 'end');
        return;
      }
      const printable = event.key.length === 1 && !event.ctrlKey && !event.metaKey && !event.altKey && !event.repeat;
      if (printable && !inScanBox && isTextField(target)) {
        // typed into another field (the quantity): remembered, in case it is a scanner's burst
        if (!burst || event.timeStamp - burst.lastAt > SCAN_KEY_GAP_MS)
          burst = { text: '', lastAt: 0, field: target, value: target.value };
        burst.text += event.key;
        burst.lastAt = event.timeStamp;
        return;
      }
      if (printable && event.key !== ' ' && !inScanBox && !target.isContentEditable) {
        // a key where nothing takes text (a button, the page) goes into the scan box
        event.preventDefault();
        burst = null;
        scanInput.focus();
        scanInput.value += event.key;
        return;
      }
      if (printable) return;
      if (
        event.key === 'Enter' &&
        burst &&
        burst.field === target &&
        burst.text.trim().length >= SCAN_MIN_LENGTH &&
        event.timeStamp - burst.lastAt <= SCAN_KEY_GAP_MS
      ) {
        // a scan that landed in the quantity field: the field gets its text back and the code is counted
        event.preventDefault();
        event.stopImmediatePropagation();
        target.value = burst.value;
        const code = burst.text;
        burst = null;
        scanInput.focus();
        queueScan(code);
        return;
      }
      burst = null;
    },
    true,
  );

  // After a click on a button (Undo, Apply) or on the page, the scan box has the focus again for the next scan.
  document.addEventListener('click', (event) => {
    if (event.target.closest?.('a, summary, input, select, textarea, label, dialog')) return;
    setTimeout(() => {
      if (!isTextField(document.activeElement)) scanInput.focus({ preventScroll: true });
    }, 0);
  });

  // Leaving the page with scans still waiting would lose them: the browser asks first.
  window.addEventListener('beforeunload', (event) => {
    if (queue.length > 0 || sending) event.preventDefault();
  });

  scanInput.focus();
})();
