"""The kernel: a separate process that runs learner code (and imports torch)."""
