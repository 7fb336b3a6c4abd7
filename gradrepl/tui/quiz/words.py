"""The quiz's words after an answer and at the end, as Markdown for the question card and the summary."""

from __future__ import annotations

from datetime import datetime

from gradrepl.tui.markdown_text import code_span, escape_markdown, fenced
from gradrepl.tutor.quiz import QuizResult, QuizSummary, due_in_words


def key_markdown(result: QuizResult) -> str:
    """The right answer as Markdown: an option in bold words, a value or a solution as code."""
    if result.question.type == "choice":
        return f"**{escape_markdown(result.expected)}**"
    if result.question.type == "task":  # a solution on one line: its statements joined by "; "
        return code_span("; ".join(line.strip() for line in result.expected.splitlines() if line.strip()))
    return code_span(result.expected)


def result_markdown(result: QuizResult, now: datetime) -> str:
    """What the learner reads beside the verdict's mark: right or wrong in a word, the feedback (the
    misconception a wrong answer shows), the key when wrong, the next review."""
    parts = [f"**{result.word.capitalize()}.** {result.feedback.strip()}".rstrip()]
    if result.explanation:
        parts.append(f"*From the lesson:* {result.explanation}")
    if not result.correct:
        if result.question.type == "task":
            parts.append("A solution:\n\n" + fenced(result.expected))
        else:
            parts.append(f"The answer: {key_markdown(result)}")
    elif result.hinted:
        parts.append("Right after a hint: it comes back a little sooner.")
    parts.append(f"Next review {due_in_words(result.due, now)}.")
    return "\n\n".join(parts)


def summary_markdown(summary: QuizSummary, total: int) -> str:
    """The end of a quiz: score, what to review, when the next reviews are due."""
    hinted = f" ({summary.hinted} after a hint)" if summary.hinted else ""
    lines = [f"## Score: {summary.score} right{hinted}", ""]
    if summary.asked < total:
        lines += [f"Stopped after {summary.asked} of {total}; your answers so far are saved.", ""]
    if summary.to_review:
        lines += ["**To review**", ""]
        for result in summary.to_review:
            prompt = result.question.prompt.splitlines()[0]
            answer = key_markdown(result)
            lines.append(f"- {prompt} → {answer}  \n  *{result.question.uid} · {result.word}*")
        lines.append("")
    elif summary.asked:
        lines += ["Nothing to review: every answer was right without a hint.", ""]
    if summary.next_due is not None:
        lines.append(f"Next review due {due_in_words(summary.next_due, summary.now)}.")
    return "\n".join(lines)
