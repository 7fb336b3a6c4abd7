"""The command palette (Ctrl+P): one provider whose list feeds both discovery and search."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Callable

from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.content import Content
from textual.markup import escape

if TYPE_CHECKING:
    from gradrepl.tui.app import GradReplApp


class GradReplCommands(Provider):
    """Restart, reset, the graph of each live tensor, lessons, the quiz, the theme."""

    @property
    def commands(self) -> list[tuple[str, Callable[[], object], str]]:
        app: GradReplApp = self.app  # type: ignore[assignment]
        commands = [
            ("kernel: restart", partial(app.run_typed, "%restart"), "Start a fresh kernel; every variable is lost"),
            ("kernel: reset namespace", partial(app.run_typed, "%reset"), "Delete every variable, keep the kernel"),
        ]
        for name in app.tensor_names():
            commands.append((f"graph: {name}", partial(app.show_details, name), f"Show the autograd graph of {name}"))
        commands.append(("lesson: open", app.open_lessons, "The course beside the console, with your progress"))
        commands.append(("quiz: start", partial(app.run_subcommand, "quiz"), "Review questions that are due"))
        commands.append(("theme: change", app.action_change_theme, "Pick a colour theme"))
        return commands

    async def discover(self) -> Hits:
        for name, run, help_text in self.commands:
            yield DiscoveryHit(Content(name), run, help=escape(help_text))

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, run, help_text in self.commands:
            score, offsets = matcher.fuzzy_search.match(query, name)
            if score > 0:
                # Content, not markup: a tensor named x[idx] must read as typed.
                display = Content(name)
                for offset in offsets:
                    display = display.stylize(matcher.match_style, offset, offset + 1)
                yield Hit(score, display, run, help=escape(help_text))
