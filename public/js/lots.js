// The lots' actions (issue 42): a write-off cannot be undone, so its button asks first (data-confirm holds the question).
// Loaded where the actions are (views/lots/_actions.ejs): /lots and the item's page, where the barcodes' Remove and the
// notes' Delete ask through it too. A page loads one script with this listener, or it would ask twice.
document.addEventListener('submit', (event) => {
  const question = event.submitter && event.submitter.dataset.confirm;
  if (question && !window.confirm(question)) event.preventDefault();
});
