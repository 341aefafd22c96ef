// The lots' actions (issue 42): a write-off cannot be undone, so its button asks first (data-confirm holds the question).
document.addEventListener('submit', (event) => {
  const question = event.submitter && event.submitter.dataset.confirm;
  if (question && !window.confirm(question)) event.preventDefault();
});
