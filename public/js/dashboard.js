// Draws the dashboard's charts from the JSON block the page carries (no inline script runs).
// Chart.js (200 KB to parse, then the drawing) is loaded only once a chart scrolls into view: on a
// phone the charts lie below the first screen, which is drawn and usable without them.
'use strict';

(() => {
  const source = document.getElementById('dashboard-chart-data');
  const canvases = Array.from(document.querySelectorAll('canvas[data-chart]'));
  if (!source || canvases.length === 0) return;
  // made with Chart.js, as the first formatter a page makes costs a throttled phone a long task
  let data, pounds, dayLabel;

  let chartJs;
  /** Chart.js, from this site (the CSP's script-src 'self'), added to the page once. */
  const loadChartJs = () =>
    (chartJs ??= new Promise((resolve, reject) => {
      const script = document.createElement('script');
      script.src = source.dataset.chartJs;
      script.addEventListener('load', () => {
        data = JSON.parse(source.textContent);
        pounds = new Intl.NumberFormat('en-GB', { style: 'currency', currency: 'GBP', maximumFractionDigits: 0 });
        dayLabel = new Intl.DateTimeFormat('en-GB', { day: 'numeric', month: 'short' });
        window.Chart.defaults.font.family = getComputedStyle(document.body).fontFamily;
        window.Chart.defaults.color = '#4a5360';
        resolve(window.Chart);
      });
      script.addEventListener('error', () => reject(new Error(`Chart.js did not load from ${script.src}`)));
      document.head.append(script);
    }));

  const draw = {
    sales: (Chart, canvas) =>
      new Chart(canvas, {
        data: {
          labels: data.sales.labels.map((day) => dayLabel.format(new Date(`${day}T12:00:00Z`))),
          datasets: [
            { type: 'bar', label: 'Sales', data: data.sales.counts, backgroundColor: '#0b4f8a', yAxisID: 'count' },
            {
              type: 'line',
              label: 'Value',
              data: data.sales.values,
              borderColor: '#c25e00',
              backgroundColor: '#c25e00',
              yAxisID: 'value',
              tension: 0.25,
            },
          ],
        },
        options: {
          maintainAspectRatio: false,
          animation: false,
          interaction: { mode: 'index', intersect: false },
          scales: {
            count: {
              position: 'left',
              beginAtZero: true,
              ticks: { precision: 0 },
              title: { display: true, text: 'Sales' },
            },
            // whole pounds a step: steps of pence, shown in whole pounds, read "£1" and "£0" over and over
            value: {
              position: 'right',
              beginAtZero: true,
              grid: { drawOnChartArea: false },
              ticks: { precision: 0, callback: (v) => pounds.format(v) },
              title: { display: true, text: 'Value' },
            },
          },
          plugins: {
            tooltip: {
              callbacks: {
                label: (ctx) =>
                  ctx.dataset.yAxisID === 'value' ? `Value: ${pounds.format(ctx.parsed.y)}` : `Sales: ${ctx.parsed.y}`,
              },
            },
          },
        },
      }),
    categories: (Chart, canvas) =>
      new Chart(canvas, {
        type: 'bar',
        data: {
          labels: data.categories.labels,
          datasets: [{ label: 'Stock value', data: data.categories.values, backgroundColor: '#1d6b2f' }],
        },
        options: {
          indexAxis: 'y',
          maintainAspectRatio: false,
          animation: false,
          scales: { x: { beginAtZero: true, ticks: { precision: 0, callback: (v) => pounds.format(v) } } },
          plugins: {
            legend: { display: false },
            tooltip: { callbacks: { label: (ctx) => pounds.format(ctx.parsed.x) } },
          },
        },
      }),
  };

  const observer = new IntersectionObserver((entries) => {
    for (const { isIntersecting, target } of entries) {
      if (!isIntersecting) continue;
      observer.unobserve(target);
      loadChartJs().then((Chart) => draw[target.dataset.chart](Chart, target));
    }
  });
  for (const canvas of canvases) observer.observe(canvas);
})();
