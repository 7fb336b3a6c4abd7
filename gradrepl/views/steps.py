"""One step's result in plain text: what the plain REPL, `run` and `play` print after a step."""

from __future__ import annotations

from gradrepl.views.tables import tensor_table


def step_text(result, width: int | None = None, tables: bool = True, before: dict | None = None) -> str:
    """What one step did, as the plain REPL and `gradrepl run` print it (a StepResult in, lines out).

    A help page is printed whole here; the plain REPL pages it instead (see display_text). Its text is
    visible already: kernel text is made so where the client decodes it. tables=False leaves out the
    tensor table (`play`'s transcript shows what a step printed and said, not the panel). `before`: the
    session's grads_before, so a .grad the step's backward added to says what it added (views.tables)."""
    lines = [text[:-1] if text.endswith("\n") else text for text in (result.stdout, result.stderr) if text]
    lines += [text for text in (result.result, display_text(result.display)) if text is not None]
    if result.error:
        lines.append(result.error.traceback.rstrip() if result.error.traceback
                     else f"{result.error.type}: {result.error.message}")
        if result.error.explanation and not result.kernel_event:
            lines.append(f"  why: {result.error.explanation}")
    if result.kernel_event:
        lines.append(f"  ! {result.kernel_event}")
    lines += [f"  note: {note}" for note in result.notes]
    if result.tensors and tables:
        lines.append(tensor_table(result.tensors, width=width, before=before))
    if result.removed:
        lines.append(f"  removed: {', '.join(result.removed)}")
    return "\n".join(lines)


def display_text(display) -> str | None:
    """A StepResult.display as plain text: a magic's text, or a help page under its title."""
    if isinstance(display, dict):
        return f"{display.get('title', 'help')}\n{display.get('text', '')}"
    return display
