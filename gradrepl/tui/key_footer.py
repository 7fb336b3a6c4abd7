"""The key footer, rebuilt once for a burst of binding changes.

Textual's Footer queues a full rebuild (every key widget removed and mounted again, a few ms)
for each bindings change; start-up (focus, app focus, the kernel's state) and every step (busy,
finished, idle) change them several times before the next frame, so most rebuilds were wasted.
"""

from __future__ import annotations

from textual.screen import Screen
from textual.widgets import Footer


class KeyFooter(Footer):
    """Footer whose queued rebuild also shows the changes that came after it was queued."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._rebuild_queued = False

    def bindings_changed(self, screen: Screen) -> None:
        # Footer.bindings_changed queues a rebuild exactly when these hold.
        queues = screen.app.app_focus and self.is_attached and screen is self.screen
        if queues and self._rebuild_queued:
            return  # the queued rebuild runs after this change: it shows it
        self._rebuild_queued = queues
        super().bindings_changed(screen)

    async def recompose(self) -> None:
        self._rebuild_queued = False  # a change from here on queues a rebuild of its own
        await super().recompose()
