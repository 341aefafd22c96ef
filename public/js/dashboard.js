// Draws the dashboard's charts from the JSON block the page carries (no inline script runs).
'use strict';

(() => {
  const source = document.getElementById('dashboard-chart-data');
  if (!source || typeof Chart === 'undefined') return;
  const data = JSON.parse(source.textContent);
  const pounds = new Intl.NumberFormat('en-GB', { style: 'currency', currency: 'GBP', maximumFractionDigits: 0 });
  const dayLabel = new Intl.DateTimeFormat('en-GB', { day: 'numeric', month: 'short' });
  Chart.defaults.font.family = getComputedStyle(document.body).fontFamily;
  Chart.defaults.color = '#4a5360';

  const salesCanvas = document.getElementById('sales-chart');
  if (salesCanvas) {
    new Chart(salesCanvas, {
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
          value: {
            position: 'right',
            beginAtZero: true,
            grid: { drawOnChartArea: false },
            ticks: { callback: (v) => pounds.format(v) },
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
    });
  }

  const categoryCanvas = document.getElementById('category-chart');
  if (categoryCanvas) {
    new Chart(categoryCanvas, {
      type: 'bar',
      data: {
        labels: data.categories.labels,
        datasets: [{ label: 'Stock value', data: data.categories.values, backgroundColor: '#1d6b2f' }],
      },
      options: {
        indexAxis: 'y',
        maintainAspectRatio: false,
        animation: false,
        scales: { x: { beginAtZero: true, ticks: { callback: (v) => pounds.format(v) } } },
        plugins: {
          legend: { display: false },
          tooltip: { callbacks: { label: (ctx) => pounds.format(ctx.parsed.x) } },
        },
      },
    });
  }
})();
