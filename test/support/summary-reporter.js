// Prints one plain closing line, "N passed, N failed", after every Jest run,
// so that CI can read the outcome whatever the project split.
class SummaryReporter {
  onRunComplete(_contexts, results) {
    const skipped = results.numPendingTests + results.numTodoTests;
    console.log(
      `\ntests: ${results.numPassedTests} passed, ${results.numFailedTests} failed${skipped ? `, ${skipped} skipped` : ''}`,
    );
  }
}
module.exports = SummaryReporter;
