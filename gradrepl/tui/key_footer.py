"""The key footer, rebuilt once for a burst of binding changes, and only when its keys changed; whole keys only.

Textual's Footer queues a full rebuild (every key widget removed and mounted again, a few ms)
for each bindings change; start-up (focus, app focus, the kernel's state) and every step (busy,
finished, idle) change them several times before the next frame, so most rebuilds were wasted.
A rebuild also holds every repaint of the screen until its keys are mounted (Widget.recompose
batches): a step that is busy and idle again before the rebuild runs leaves the same keys, so
none is made and the panel's row is drawn at once.
"""

from __future__ import annotations

from textual.screen import Screen
from textual.widgets import Footer
from textual.widgets._footer import FooterKey


class KeyFooter(Footer):
    """Footer whose queued rebuild also shows the changes that came after it was queued."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._rebuild_queued = False
        self._shown: tuple | None = None  # the keys of the last rebuild (None: none made yet)

    def bindings_changed(self, screen: Screen) -> None:
        if getattr(screen.app, "holding_repaints", False):
            return  # the app asks again when it lets the screen repaint (GradReplApp.REPLY_HOLD)
        # Footer.bindings_changed queues a rebuild exactly when these hold.
        queues = screen.app.app_focus and self.is_attached and screen is self.screen
        if queues and self._rebuild_queued:
            return  # the queued rebuild runs after this change: it shows it
        self._rebuild_queued = queues
        super().bindings_changed(screen)

    async def recompose(self) -> None:
        self._rebuild_queued = False  # a change from here on queues a rebuild of its own
        keys = self._keys()
        if keys == self._shown:
            return
        self._shown = keys
        await super().recompose()
        self.call_after_refresh(self.fit_keys)

    def _keys(self) -> tuple | None:
        """What compose() would show: each shown binding's key, words and state (None: not ready yet)."""
        if not self._bindings_ready or not self.is_attached:
            return None
        return tuple((binding.key, binding.action, binding.description, enabled, tooltip)
                     for _, binding, enabled, tooltip in self.screen.active_bindings.values()
                     if binding.show or binding.key == self.app.COMMAND_PALETTE_BINDING)

    def on_resize(self) -> None:
        for key in self.query(FooterKey):
            key.display = True  # a wider footer may show them again; fit_keys leaves out what still does not fit
        self.call_after_refresh(self.fit_keys)

    def fit_keys(self) -> None:
        """Leave out the keys that run past the edge or under the docked palette key, so none is cut mid-word
        (at 80 columns `f4 Later step` ran under `^p palette`)."""
        keys = list(self.query(FooterKey))
        palette = [key for key in keys if key.has_class("-command-palette")]
        edge = min([self.region.right] + [key.region.x for key in palette if key.region.width])
        for key in keys:
            if key not in palette and key.region.right > edge:
                key.display = False
