//! The progress bar, and log lines printed above it.

use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

/// A progress bar on standard error (hidden when it is not a terminal) that
/// counts benchmark steps.
#[derive(Debug)]
pub(crate) struct Progress {
    bar: ProgressBar,
}

impl Progress {
    /// A bar for `steps` steps.
    #[must_use]
    pub(crate) fn new(steps: u64) -> Progress {
        let bar = ProgressBar::new(steps);
        bar.set_style(
            ProgressStyle::with_template("{elapsed_precise:.dim} [{bar:32}] {pos}/{len} {msg}")
                .expect("valid template")
                .progress_chars("=> "),
        );
        bar.enable_steady_tick(Duration::from_millis(200));
        Progress { bar }
    }

    /// Says what is running now.
    pub(crate) fn start(&self, what: impl Into<String>) {
        self.bar.set_message(what.into());
    }

    /// Counts one finished step.
    pub(crate) fn finish_step(&self) {
        self.bar.inc(1);
    }

    /// Prints `line` on standard output, above the bar.
    pub(crate) fn println(&self, line: impl AsRef<str>) {
        self.bar.suspend(|| println!("{}", line.as_ref()));
    }

    /// Removes the bar.
    pub(crate) fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
