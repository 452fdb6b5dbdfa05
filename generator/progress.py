"""How far a long run has got (loading content, building), on stderr.

On a terminal: one line redrawn in place (at most ten times a second), the stage, a bar,
the counts and an estimate of the time left. In a log (not a terminal, or `CI` set): no bar
at all, so that a CI log holds only the lines the run logs, such as the build's summary.
"""

import io
import os
import shutil
import sys
import threading
import time
from typing import TextIO

REDRAW_SECONDS = 0.1
BAR_WIDTH = 24


class Progress:
    """Counts reported by a run, drawn as a bar; `log` prints a line above it."""

    def __init__(self, stream: TextIO | None = None, env=None, clock=time.monotonic):
        self.stream = sys.stderr if stream is None else stream
        env = os.environ if env is None else env
        self.live = _is_terminal(self.stream) and not env.get("CI")
        self.clock = clock
        self._lock = threading.Lock()  # the build and the server's threads both report
        self._name, self._done, self._started = "", 0, 0.0
        self._total: int | None = None
        self._drawn_at: float | None = None  # None: no bar on the screen

    def stage(self, name: str, total: int | None = None) -> None:
        """A new stage of `total` steps (None: unknown), drawn at once."""
        with self._lock:
            self._name, self._total, self._done = name, total, 0
            self._started = self.clock()
            self._draw()

    def advance(self, steps: int = 1) -> None:
        with self._lock:
            self._done += steps
            if self._total is not None:
                self._done = min(self._done, self._total)  # the last chunk is counted whole
            if self._drawn_at is None or self.clock() - self._drawn_at >= REDRAW_SECONDS:
                self._draw()

    def log(self, message: str) -> None:
        """A line of the run's log, printed above the bar (which the next report redraws)."""
        with self._lock:
            self._clear()
            self.stream.write(message + "\n")
            self.stream.flush()

    def close(self) -> None:
        with self._lock:
            self._clear()

    def line(self) -> str:
        """The bar as drawn now: stage, bar, counts and time left."""
        done, total = self._done, self._total
        elapsed = self.clock() - self._started
        if total is None:
            return f"{self._name}: {done:,} in {_duration(elapsed)}"
        share = done / total if total else 1.0
        filled = int(BAR_WIDTH * share)
        bar = "#" * filled + "-" * (BAR_WIDTH - filled)
        text = f"{self._name} [{bar}] {done:,}/{total:,} {int(100 * share)}%"
        if 0 < done < total and elapsed >= 1:
            text += f" ETA {_duration(elapsed * (total - done) / done)}"
        return text

    def _draw(self) -> None:
        if not self.live:
            return
        width = shutil.get_terminal_size().columns - 1
        self.stream.write("\r" + self.line()[:width] + "\x1b[K")
        self.stream.flush()
        self._drawn_at = self.clock()

    def _clear(self) -> None:
        if self._drawn_at is not None:
            self.stream.write("\r\x1b[K")
            self._drawn_at = None


def _is_terminal(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # closed, or not a file
        return False


def _duration(seconds: float) -> str:
    seconds = round(seconds)
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


class _Nowhere(io.StringIO):
    def write(self, text: str) -> int:
        return len(text)


QUIET = Progress(_Nowhere())  # for runs that report to no one
