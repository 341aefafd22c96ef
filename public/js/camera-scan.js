// Scan with camera (views/partials/_camera-scan.ejs): the device's camera read for barcodes, each one
// found put into the page's scan box and submitted as a keyboard-wedge scanner's Enter would, so the
// page's own scan handling (its queue, its announcements) takes it. The Barcode Detection API where
// the browser has it, otherwise barcode-detector's ZXing WebAssembly reader, both from our own origin.
'use strict';

(() => {
  if (window.cameraScanLoaded) return;
  window.cameraScanLoaded = true;

  /** The same code again counts only after it has been out of view this long (a barcode held in view counts once). */
  const SAME_CODE_COOLDOWN_MS = 1500;
  /** A pause between reads of the video: a phone keeps up and the page stays responsive. */
  const DETECT_INTERVAL_MS = 120;
  /** The symbologies read: SKU labels (Code 128, QR, Data Matrix) and manufacturers' codes (EAN/UPC, ITF-14, GS1 DataMatrix). */
  const FORMATS = [
    'code_128',
    'code_39',
    'code_93',
    'codabar',
    'ean_13',
    'ean_8',
    'upc_a',
    'upc_e',
    'itf',
    'qr_code',
    'data_matrix',
  ];
  const PONYFILL = '/assets/barcode-detector/ponyfill.js';
  const WASM_DIR = '/assets/zxing-wasm/';

  const hasCamera = () => typeof navigator.mediaDevices?.getUserMedia === 'function';

  let ponyfill;
  /** barcode-detector's ZXing build (an IIFE defining BarcodeDetectionAPI), loaded once, its .wasm fetched from our origin. */
  function loadPonyfill() {
    ponyfill ??= new Promise((resolve, reject) => {
      const script = document.createElement('script');
      script.src = PONYFILL;
      script.onload = () => {
        const api = window.BarcodeDetectionAPI;
        if (!api?.BarcodeDetector) return reject(new Error('the barcode reader did not load'));
        api.setZXingModuleOverrides({ locateFile: (file) => WASM_DIR + file });
        resolve(api.BarcodeDetector);
      };
      script.onerror = () => reject(new Error('the barcode reader could not be loaded'));
      document.head.append(script);
    }).catch((error) => {
      ponyfill = undefined;
      throw error;
    });
    return ponyfill;
  }

  let detector;
  /** The browser's own detector when it reads our formats, ZXing's otherwise. */
  function barcodeDetector() {
    detector ??= (async () => {
      if ('BarcodeDetector' in window) {
        try {
          const supported = await window.BarcodeDetector.getSupportedFormats();
          const formats = FORMATS.filter((format) => supported.includes(format));
          if (formats.length > 0) return new window.BarcodeDetector({ formats });
        } catch {
          // a browser whose detector is there but unusable: the WebAssembly one
        }
      }
      const Ponyfill = await loadPonyfill();
      return new Ponyfill({ formats: FORMATS });
    })().catch((error) => {
      detector = undefined;
      throw error;
    });
    return detector;
  }

  /** Why the camera could not start, in words a person can act on. */
  function cameraRefusal(error) {
    switch (error?.name) {
      case 'NotAllowedError':
      case 'SecurityError':
        return 'The camera was not allowed. Allow this site to use the camera in the browser, then press Scan with camera again; or type or scan the code.';
      case 'NotFoundError':
      case 'OverconstrainedError':
        return 'No camera was found on this device. Type or scan the code instead.';
      case 'NotReadableError':
      case 'AbortError':
        return 'The camera is in use by another application, or could not be started. Close it there and try again.';
      default:
        return `The camera could not be started (${error?.message || error?.name || 'unknown error'}). Type or scan the code instead.`;
    }
  }

  /** One Scan with camera control: its button, its preview panel and its target scan box. */
  function setUp(root) {
    const button = root.querySelector('[data-camera-open]');
    const panel = root.querySelector('[data-camera-panel]');
    const video = root.querySelector('video');
    const stopButton = root.querySelector('[data-camera-stop]');
    const status = root.querySelector('[data-camera-status]');
    const target = () => document.getElementById(root.dataset.target);
    if (!button || !panel || !video || !stopButton || !status) return;
    if (!hasCamera()) return; // the button stays hidden: no camera API in this browser (or not a secure origin)
    button.hidden = false;

    let stream = null;
    let timer = null;
    /** Which start the camera is on (0: off): a start still waiting for the camera or the reader gives up once it changes. */
    let session = 0;
    let sessions = 0;
    /** The code last taken and when it was last seen in view. */
    let last = { code: null, seenAt: 0 };

    const say = (message, refused = false) => {
      status.textContent = message;
      status.classList.toggle('refused', refused);
    };

    function stop({ focus = true, message = 'Camera stopped.', refused = false } = {}) {
      session = 0;
      clearTimeout(timer);
      timer = null;
      for (const track of stream?.getTracks() ?? []) track.stop();
      stream = null;
      video.srcObject = null;
      panel.hidden = true;
      button.setAttribute('aria-expanded', 'false');
      button.hidden = false;
      root.classList.remove('camera-on');
      say(message, refused);
      // the button, not the scan box: on a phone, focusing a text box opens the keyboard over the page
      if (focus) button.focus({ preventScroll: true });
    }

    /** A code read: into the scan box and submitted as Enter would, unless the page takes the `camera-scan` event itself. */
    function take(code) {
      const input = target();
      if (!input) return;
      say(`Scanned ${code}`);
      const event = new CustomEvent('camera-scan', { bubbles: true, cancelable: true, detail: { code } });
      if (!input.dispatchEvent(event)) return;
      input.value = code;
      if (input.form) input.form.requestSubmit();
    }

    async function readFrame(reader, current) {
      if (session !== current) return;
      try {
        if (video.readyState >= 2) {
          const found = await reader.detect(video);
          if (session !== current) return;
          const now = performance.now();
          const codes = [...new Set(found.map((barcode) => barcode.rawValue).filter((code) => code && code.trim()))];
          if (codes.includes(last.code)) last.seenAt = now;
          const fresh = codes.find((code) => code !== last.code || now - last.seenAt > SAME_CODE_COOLDOWN_MS);
          if (fresh !== undefined) {
            last = { code: fresh, seenAt: now };
            take(fresh);
          }
        }
      } catch (error) {
        if (session === current)
          stop({ message: `Barcodes could not be read: ${error?.message || error}`, refused: true });
        return;
      }
      timer = setTimeout(() => readFrame(reader, current), DETECT_INTERVAL_MS);
    }

    async function start() {
      const current = (sessions += 1);
      session = current;
      panel.hidden = false;
      button.setAttribute('aria-expanded', 'true');
      root.classList.add('camera-on');
      // while the camera is on, its Stop button under the preview is the one control (and has the focus)
      button.hidden = true;
      stopButton.focus({ preventScroll: true });
      say('Starting the camera…');
      let opened;
      try {
        opened = await navigator.mediaDevices.getUserMedia({
          video: { facingMode: { ideal: 'environment' }, width: { ideal: 1280 }, height: { ideal: 720 } },
          audio: false,
        });
      } catch (error) {
        if (session === current) stop({ message: cameraRefusal(error), refused: true });
        return;
      }
      if (session !== current) {
        for (const track of opened.getTracks()) track.stop();
        return;
      }
      stream = opened;
      video.srcObject = stream;
      video.play().catch(() => {
        // a muted inline video plays without a gesture; one that does not is still read below
      });
      let reader;
      try {
        reader = await barcodeDetector();
      } catch (error) {
        if (session === current)
          stop({
            message: `Barcodes cannot be read in this browser: ${error?.message || error}`,
            refused: true,
          });
        return;
      }
      if (session !== current) return;
      last = { code: null, seenAt: 0 };
      say('Camera on: hold a barcode in view.');
      readFrame(reader, current);
    }

    button.addEventListener('click', () => {
      if (!session) start();
    });
    stopButton.addEventListener('click', () => stop());
    panel.addEventListener('keydown', (event) => {
      if (event.key === 'Escape') {
        event.preventDefault();
        stop();
      }
    });
    // the camera is let go when the page is left (or hidden in the background on a phone)
    window.addEventListener('pagehide', () => session && stop({ focus: false }));
    document.addEventListener('visibilitychange', () => {
      if (document.hidden && session) stop({ focus: false });
    });
  }

  function setUpAll() {
    for (const root of document.querySelectorAll('[data-camera-scan]:not([data-camera-ready])')) {
      root.dataset.cameraReady = 'true';
      setUp(root);
    }
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', setUpAll);
  else setUpAll();
})();
