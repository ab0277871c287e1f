"""The model's words drawn as markdown on a terminal while they stream.

rich renders the markdown (headings, lists, code blocks with their highlighting); its Live
display redraws the answer as it grows, cropped to the screen while it streams, and in full
when it ends. Nothing else may write to the terminal while it draws: the printer ends it first.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from rich.live import Live
    from rich.markdown import Markdown

REDRAW_SECONDS = 0.1  # a redraw re-renders the whole answer: a few per second are enough


class MarkdownView:
    """One stretch of the model's words, redrawn as markdown until `end`."""

    def __init__(self, err: TextIO) -> None:
        """Draw on ERR, a terminal."""
        from rich.console import Console

        self.console = Console(file=err, force_terminal=True)
        self._live: Live | None = None
        self._text = ""
        self._drawn_at = 0.0

    def feed(self, text: str) -> None:
        """Add streamed words, redrawing now and then."""
        from rich.live import Live

        self._text += text
        if self._live is None:
            if not self._text.strip():
                return  # blank lines alone would open an empty region
            # Toolgate writes to the terminal itself, and only once this view has ended.
            self._live = Live(
                console=self.console,
                auto_refresh=False,
                redirect_stdout=False,
                redirect_stderr=False,
            )
            self._live.start()
        now = time.monotonic()
        if now - self._drawn_at >= REDRAW_SECONDS:
            self._drawn_at = now
            self._live.update(self._markdown(), refresh=True)

    def end(self) -> None:
        """Draw the whole text once more and leave it on the screen."""
        if self._live is not None:
            self._live.update(self._markdown(), refresh=True)
            self._live.stop()
        self._live = None
        self._text = ""

    def _markdown(self) -> Markdown:
        from rich.markdown import Markdown

        return Markdown(self._text.strip())
