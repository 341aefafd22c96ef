// Receiving by scan (views/orders/_receive-scan.ejs): a code scanned into the scan box adds one to its
// order line's received quantity in the receive form. The server finds the line (the one code lookup);
// scans wait their turn in a queue, so a burst of them is never lost or merged.
'use strict';

(() => {
  const form = document.getElementById('receive-scan-form');
  const input = document.getElementById('receive-scan');
  const result = document.getElementById('receive-scan-result');
  const log = document.getElementById('receive-scan-log');
  if (!form || !input || !result || !log) return;
  form.hidden = false;
  /** How many scans the log keeps on the page, as the counter's. */
  const SCAN_LOG_LENGTH = 30;

  /** Codes scanned and not yet looked up, oldest first: one lookup at a time keeps their order. */
  const queue = [];
  let working = false;

  /** The scan's result: said once in the status line, and kept in the log (newest first, a refusal marked) as the counter does. */
  function announce(code, message, refused) {
    result.textContent = message;
    result.classList.toggle('refused', refused);
    const entry = document.createElement('li');
    entry.className = refused ? 'refused' : 'added';
    const mark = document.createElement('span');
    mark.className = refused ? 'badge danger' : 'badge ok';
    mark.textContent = refused ? 'Refused' : 'Added';
    const scanned = document.createElement('span');
    scanned.className = 'scan-code';
    scanned.textContent = code;
    const said = document.createElement('span');
    said.className = 'scan-result';
    said.textContent = message;
    entry.append(mark, ' ', scanned, ' ', said);
    log.prepend(entry);
    while (log.children.length > SCAN_LOG_LENGTH) log.lastElementChild.remove();
  }

  /** A quantity as typed: empty is none yet; anything not a number is the person's to correct. */
  function typedQuantity(field) {
    const text = field.value.trim();
    if (text === '') return 0;
    const value = Number(text);
    return Number.isFinite(value) && value >= 0 ? value : null;
  }

  const plus = (value, step) => String(Math.round((value + step) * 1000) / 1000);

  function highlight(row) {
    if (!row) return;
    row.classList.remove('scanned');
    void row.offsetWidth; // restart the highlight for a second scan of the same line
    row.classList.add('scanned');
  }

  /** Adds one to the first of the item's open lines with room left (their order is the order's). */
  function addOne(code, lines) {
    for (const line of lines) {
      const field = document.getElementById(`receivedQuantity-${line.orderItemId}`);
      if (!field) continue;
      const typed = typedQuantity(field);
      if (typed === null) {
        announce(code, `The received quantity of ${line.name} is not a number: correct it, then scan again`, true);
        return;
      }
      if (typed + 1 > line.outstandingQuantity) continue;
      field.value = plus(typed, 1);
      field.dispatchEvent(new Event('input', { bubbles: true }));
      field.dispatchEvent(new Event('change', { bubbles: true }));
      highlight(field.closest('tr'));
      announce(code, `${line.name}: ${field.value} of ${line.outstandingQuantity} outstanding`, false);
      return;
    }
    const outstanding = lines.reduce((sum, line) => sum + line.outstandingQuantity, 0);
    announce(code, `${lines[0]?.name ?? code}: all ${outstanding} outstanding are already entered`, true);
  }

  // ---- Lots of a lot-tracked line (views/orders/_receive-lots.ejs, issue 42) ----

  const lotsOf = (orderItemId) => document.querySelector(`.receive-lots[data-line="${orderItemId}"]`);
  const lotRows = (fieldset) => [...fieldset.querySelectorAll('.lot-row')];
  const rowField = (row, kind) => row.querySelector(`.lot-${kind}`);

  /** A new empty lot row for the line, made from its first row: its fields renumbered, their errors gone. */
  function addLotRow(fieldset) {
    const rows = lotRows(fieldset);
    const row = rows[0].cloneNode(true);
    const index = rows.length;
    const name = fieldset.dataset.name;
    row.querySelectorAll('.field-error').forEach((error) => error.remove());
    row.querySelectorAll('input').forEach((field) => {
      const id = field.id.replace(/-\d+$/, `-${index}`);
      const label = row.querySelector(`label[for="${field.id}"]`);
      field.id = id;
      field.value = '';
      field.removeAttribute('aria-invalid');
      field.removeAttribute('aria-describedby');
      if (!label) return;
      label.htmlFor = id;
      const hidden = label.querySelector('.visually-hidden');
      if (hidden)
        hidden.textContent = field.classList.contains('lot-number')
          ? ` ${index + 1} of ${name}`
          : ` (lot ${index + 1} of ${name})`;
    });
    rows[rows.length - 1].after(row);
    return row;
  }

  /** The line's received quantity kept at what its lots add up to, while each lot's quantity is a number. */
  function syncReceived(fieldset) {
    const field = document.getElementById(`receivedQuantity-${fieldset.dataset.line}`);
    const typed = lotRows(fieldset).map((row) => typedQuantity(rowField(row, 'quantity')));
    if (!field || typed.includes(null)) return;
    const sum = typed.reduce((total, quantity) => total + quantity, 0);
    field.value = sum > 0 ? plus(sum, 0) : '';
  }

  for (const fieldset of document.querySelectorAll('.receive-lots')) {
    const button = fieldset.querySelector('.add-lot');
    button.hidden = false;
    button.addEventListener('click', () => rowField(addLotRow(fieldset), 'number').focus());
    fieldset.addEventListener('input', (event) => {
      if (event.target.classList?.contains('lot-quantity')) syncReceived(fieldset);
    });
  }

  /** A GS1 scan of a bottle: one more of its lot on the first of the item's open lines with room, the lot's row made when new. */
  function addOneToLot(code, lines, lot) {
    for (const line of lines) {
      const fieldset = lotsOf(line.orderItemId);
      if (!fieldset) continue;
      const quantities = lotRows(fieldset).map((row) => typedQuantity(rowField(row, 'quantity')));
      if (quantities.includes(null)) {
        announce(code, `A lot quantity of ${line.name} is not a number: correct it, then scan again`, true);
        return;
      }
      const entered = quantities.reduce((total, quantity) => total + quantity, 0);
      if (entered + 1 > line.outstandingQuantity) continue;
      const rows = lotRows(fieldset);
      const blank = (row) => ['number', 'expiry', 'quantity'].every((kind) => rowField(row, kind).value.trim() === '');
      const row =
        rows.find((r) => rowField(r, 'number').value.trim() === lot.lotNumber) ??
        rows.find(blank) ??
        addLotRow(fieldset);
      rowField(row, 'number').value = lot.lotNumber;
      if (lot.expiresOn && rowField(row, 'expiry').value === '') rowField(row, 'expiry').value = lot.expiresOn;
      const quantity = rowField(row, 'quantity');
      quantity.value = plus(typedQuantity(quantity) ?? 0, 1);
      syncReceived(fieldset);
      highlight(row);
      announce(
        code,
        `${line.name}: lot ${lot.lotNumber} ${quantity.value}, ${plus(entered, 1)} of ${line.outstandingQuantity} outstanding`,
        false,
      );
      return;
    }
    const outstanding = lines.reduce((sum, line) => sum + line.outstandingQuantity, 0);
    announce(code, `${lines[0]?.name ?? code}: all ${outstanding} outstanding are already entered`, true);
  }

  /** A scan's lines: a lot-tracked item's go by the lot the scan carries, the others by one more each. */
  function received(code, body) {
    if (!body.tracked) return addOne(code, body.lines);
    if (body.lot) return addOneToLot(code, body.lines, body.lot);
    announce(
      code,
      `${body.lines[0]?.name ?? code} is tracked by lot: scan the code on the bottle that carries its lot, or type the lot`,
      true,
    );
  }

  async function lookUp(code) {
    const url = `${form.dataset.lookup}?${new URLSearchParams({ code })}`;
    let response;
    try {
      response = await fetch(url, { headers: { Accept: 'application/json' }, credentials: 'same-origin' });
    } catch {
      announce(code, `'${code}' not added: the server could not be reached`, true);
      return;
    }
    const body = await response.json().catch(() => null);
    if (response.ok && Array.isArray(body?.lines)) received(code, body);
    else announce(code, body?.message ?? `'${code}' not added: the server answered ${response.status}`, true);
  }

  async function work() {
    if (working) return;
    working = true;
    try {
      while (queue.length > 0) await lookUp(queue.shift());
    } finally {
      working = false;
    }
  }

  // Enter (a wedge scanner's, a person's or the camera's) queues what the box holds and empties it for the next scan.
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const code = input.value.trim();
    input.value = '';
    if (code === '') return;
    queue.push(code);
    work();
  });

  // ---- A wedge scanner's burst wherever the focus is ----
  // A scanner types a whole code a few milliseconds a key and presses Enter; people leave 60 ms and more
  // between keys. A burst typed into another field (a quantity) comes out of it and is scanned instead:
  // its Enter must not submit the receive form. A key where nothing takes text goes into the scan box.
  const SCAN_KEY_GAP_MS = 50;
  const SCAN_MIN_LENGTH = 3;
  let burst = null;

  const takesText = (element) =>
    element instanceof HTMLTextAreaElement ||
    element instanceof HTMLSelectElement ||
    element?.isContentEditable ||
    (element instanceof HTMLInputElement &&
      !['checkbox', 'radio', 'button', 'submit', 'reset', 'file'].includes(element.type));

  // A GS1 string's FNC1 separator: sent as the GS character, or as Ctrl+] by a scanner set up so. A
  // text box may drop it, so the script puts it in the scan box itself: the lot after it stays whole.
  const GS = '\x1d';
  document.addEventListener(
    'keydown',
    (event) => {
      if (form.hidden || event.isComposing) return;
      const target = event.target;
      const gs = event.key === GS || (event.ctrlKey && !event.altKey && !event.metaKey && event.key === ']');
      const key = gs ? GS : event.key;
      const printable = gs || (event.key.length === 1 && !event.ctrlKey && !event.metaKey && !event.altKey);
      if (target === input) {
        if (gs) {
          event.preventDefault();
          input.setRangeText(
            GS,
            input.selectionStart ?? input.value.length,
            input.selectionEnd ?? input.value.length,
            'end',
          );
        }
        return;
      }
      if (printable && key !== ' ' && !takesText(target)) {
        event.preventDefault();
        burst = null;
        input.focus();
        input.value += key;
        return;
      }
      if (printable && target instanceof HTMLInputElement && takesText(target)) {
        if (!burst || event.timeStamp - burst.lastAt > SCAN_KEY_GAP_MS || burst.field !== target)
          burst = {
            field: target,
            value: target.value,
            start: target.selectionStart,
            end: target.selectionEnd,
            text: '',
          };
        if (gs) event.preventDefault();
        burst.text += key;
        burst.lastAt = event.timeStamp;
        return;
      }
      if (
        event.key === 'Enter' &&
        burst?.field === target &&
        burst.text.trim().length >= SCAN_MIN_LENGTH &&
        event.timeStamp - burst.lastAt <= SCAN_KEY_GAP_MS
      ) {
        event.preventDefault();
        event.stopImmediatePropagation();
        const { field, value, start, end, text } = burst;
        burst = null;
        field.value = value;
        if (typeof start === 'number') field.setSelectionRange(start, end);
        input.focus();
        queue.push(text.trim());
        work();
        return;
      }
      burst = null;
    },
    true,
  );
})();
