"""What the learner is told when a Textual worker raises (workers run with exit_on_error=False, so
without this a failure would vanish: a step queue stopped, a status stuck on "warming up").

The app's one `on_worker_state_changed` handler says it with these words, logs the traceback, and
restores what the worker would have left behind; widgets forward their workers' failures to it.
"""

from __future__ import annotations

import logging

log = logging.getLogger("gradrepl.tui")

# Worker (method) name -> what it was doing, as the learner would say it.
DOING = {
    "start_kernel": "Starting the kernel",
    "run_steps": "Running your steps",
    "interrupt_step": "Interrupting the step",
    "kill_kernel": "Killing the kernel",
    "fetch_completions": "Completion",
    "fetch_details": "Loading the tensor's details",
    "ask_first": "Asking before your variables are lost",
    "load_course": "Loading the course",
    "read_progress": "Reading your lesson progress",
    "warm_keys": "Starting the answer-key kernel",
    "compute_key": "Computing the answer key",
    "grade_answer": "Grading the answer",
    "run_calls": "Running the lesson",
}

AFTER = {
    "kill_kernel": "The kernel could not be restarted, so no kernel is running and your variables are gone. "
                   "F8 tries again; Ctrl+Q quits (`gradrepl doctor` says what is missing).",
    "start_kernel": "No kernel is running. Quit with Ctrl+Q and run `gradrepl doctor` to see what is missing.",
    "run_steps": "The step queue was started again: steps you type next will run.",
}


def failure_words(name: str, error: BaseException | None) -> str:
    """One notice: what failed, why (the exception in a line), and what the learner can do now."""
    doing = DOING.get(name, f"A background task ({name})")
    reason = f"{type(error).__name__}: {error}" if error is not None else "unknown error"
    after = AFTER.get(name, "The session goes on; try again.")
    return f"{doing} failed: {reason}\n{after}"
