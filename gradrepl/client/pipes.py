"""The kernel's pipes as the client reads them: its learner output cut into steps (OutputPipe) and
its replies, each checked against its op's schema before anyone sees it (ReplyChannel)."""

from __future__ import annotations

import asyncio
import os
import time
from collections import deque

from gradrepl.protocol import messages as protocol, reply_schema
from gradrepl.terminal_text import visible


class OutputPipe:
    """Reads one learner stream and cuts it into steps at the kernel's sentinels.

    Learner code can write anything here, forged sentinels included, so the scan
    never trusts a sentinel's shape: a prefix not followed by at most
    STEP_DIGITS digits and the terminator is ordinary text. Each byte is looked
    at a bounded number of times, so a flood costs linear time. A step's text is
    made visible (terminal_text) as it is cut.
    """

    STEP_DIGITS = 20

    def __init__(self, fd: int, nonce: str):
        self.fd = fd
        self.prefix = f"\x1egradrepl:{nonce}:".encode()
        self.buffer = bytearray()
        self.current = bytearray()
        self.dropped = 0
        self.finished: dict[int, tuple[str, int]] = {}
        self.eof = False
        self.changed = asyncio.Event()
        self.transport: asyncio.ReadTransport | None = None

    async def start(self) -> None:
        self.transport = await read_pipe(self.fd, self._received, self._ended)

    def _received(self, data: bytes) -> None:
        self.buffer += data
        self._scan()

    def _ended(self) -> None:
        self.eof = True
        self._take(bytes(self.buffer))
        self.buffer.clear()
        self.changed.set()

    def _scan(self) -> None:
        buffer, prefix = self.buffer, self.prefix
        pos = 0
        while True:
            start = buffer.find(prefix, pos)
            if start < 0:
                # Keep a tail that may be the start of a sentinel split across reads.
                keep = max(pos, len(buffer) - len(prefix) + 1)
                self._take(bytes(buffer[pos:keep]))
                del buffer[:keep]
                return
            head = start + len(prefix)
            digits = head
            while digits < len(buffer) and digits - head < self.STEP_DIGITS and 48 <= buffer[digits] <= 57:
                digits += 1
            tail = buffer[digits:digits + 2]
            if tail == b"\x1e\n" and digits > head:
                self._take(bytes(buffer[pos:start]))
                self._finish(int(buffer[head:digits]))
                pos = digits + 2
            elif digits == len(buffer) or tail == b"\x1e":
                self._take(bytes(buffer[pos:start]))  # perhaps a sentinel still arriving
                del buffer[:start]
                return
            else:
                self._take(bytes(buffer[pos:head]))   # not a sentinel: the learner's own text
                pos = head

    def _finish(self, step: int) -> None:
        self.finished[step] = (visible(self.current.decode("utf-8", "replace")), self.dropped)
        self.current.clear()
        self.dropped = 0
        self.changed.set()

    def _take(self, data: bytes) -> None:
        room = protocol.OUTPUT_CAP - len(self.current)
        self.current += data[:max(room, 0)]
        self.dropped += max(len(data) - max(room, 0), 0)

    async def step_output(self, step: int, timeout: float) -> tuple[str, int]:
        """The text of one step (waits for its sentinel, or EOF, or the timeout)."""
        deadline = time.monotonic() + timeout
        while step not in self.finished and not self.eof:
            self.changed.clear()
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            try:
                await asyncio.wait_for(self.changed.wait(), remaining)
            except asyncio.TimeoutError:
                break
        if step in self.finished:
            text = self.finished.pop(step)
            for stale in [number for number in self.finished if number < step]:
                del self.finished[stale]      # forged or late sentinels of earlier steps
            return text
        text, dropped = visible(self.current.decode("utf-8", "replace")), self.dropped
        self.current.clear()
        self.dropped = 0
        return text, dropped


# The layer the reply channel adds to the kernel's sandbox report (gradrepl doctor).
REPLIES_LAYER = {"active": True, "detail": "every reply checked against its op's schema (types, known keys, "
                                           "sizes) and its text made visible; one that does not fit replaces "
                                           "the kernel"}


class ReplyChannel:
    """The reply pipe: bounded lines, each of which must be the one reply awaited, in its op's shape.

    Learner code runs in the kernel and can write to this pipe, or rewrite the kernel's reply
    writer. A line that is oversize, not a protocol message, not the awaited reply, or not of the
    shape its op answers with (reply_schema.py) means the kernel can no longer be believed: the
    channel ends with the reason, the kernel is killed, and the request waiting on it fails with
    those words. A reply that fits is delivered with its text made visible.
    """

    def __init__(self, fd: int, on_broken):
        self.fd = fd
        self.on_broken = on_broken
        # The replies awaited, oldest first (id, op, future; id and op None: the ready line): the
        # kernel answers requests in the order they were sent.
        self.waiting: deque[tuple[object, str | None, asyncio.Future]] = deque()
        self.ended = False
        self.broken: str | None = None
        self.buffer = bytearray()
        self.scanned = 0  # bytes of the buffer known to hold no newline
        self.transport: asyncio.ReadTransport | None = None

    async def start(self) -> None:
        self.transport = await read_pipe(self.fd, self._received, lambda: self._end(None))

    def _received(self, data: bytes) -> None:
        if self.ended:
            return
        self.buffer += data
        while (end := self.buffer.find(b"\n", self.scanned)) >= 0:
            if end >= protocol.REPLY_CAP:
                break
            line = bytes(self.buffer[:end + 1])
            del self.buffer[:end + 1]
            self.scanned = 0
            reason = self._deliver(line)
            if reason:
                self._end(reason)
                return
        self.scanned = len(self.buffer)
        if self.scanned >= protocol.REPLY_CAP:
            self._end(f"the kernel sent a reply line longer than {protocol.REPLY_CAP >> 20} MiB")

    def _deliver(self, line: bytes) -> str | None:
        try:
            message = protocol.decode(line)
        except (ValueError, RecursionError) as exc:
            return f"the kernel sent a line that is not a protocol message ({str(exc)[:120]})"
        if not self.waiting:
            return "the kernel sent a reply nobody asked for"
        awaited, op, future = self.waiting[0]
        kind = "ready" if awaited is None else "reply"
        if message.get("type") != kind or (awaited is not None and message.get("id") != awaited):
            return "the kernel sent a reply to a request that was not asked"
        try:
            message = reply_schema.check(op, message)
        except reply_schema.Violation as violation:
            what = "ready line is not of the shape it has" if op is None else f"reply to {op} is not of the shape {op} answers with"
            return f"its {what}: {violation}"
        except RecursionError:
            return f"its reply to {op} nests too deep to be read"
        self.waiting.popleft()
        if not future.done():
            future.set_result(message)
        return None

    def _end(self, reason: str | None) -> None:
        self.ended = True
        if reason:
            self.broken = visible(f"the kernel broke the reply protocol ({reason}; learner code may have written "
                                  "to the kernel's reply pipe or rewritten its replies), so it was stopped")
            self.on_broken()
        for _, _, future in self.waiting:
            if not future.done():
                future.set_result(None)
        self.waiting.clear()

    def expect(self, msg_id: object, op: str | None) -> asyncio.Future:
        """A future for the reply with this id to `op` (both None for the ready line), after those
        expected before it; it resolves to None if the channel ends first."""
        future = asyncio.get_running_loop().create_future()
        if self.ended:
            future.set_result(None)
        else:
            self.waiting.append((msg_id, op, future))
        return future

    async def await_reply(self, msg_id: object, op: str | None, timeout: float | None = None) -> dict | None:
        """The reply with this id, or None if the channel ended first. A reply given up on (timeout,
        cancel) is no longer expected: if it comes after all, the channel breaks."""
        future = self.expect(msg_id, op)
        try:
            return await asyncio.wait_for(future, timeout)
        finally:
            if not future.done() or future.cancelled():
                self.waiting = deque(entry for entry in self.waiting if entry[2] is not future)


class _Reading(asyncio.Protocol):
    """A read pipe's data handed to `received` as it arrives (no reader task in between); `ended` once,
    at EOF or when the pipe fails, a partial line or step then being whatever arrived."""

    def __init__(self, received, ended):
        self.received = received
        self.ended = ended
        self.done = False

    def data_received(self, data: bytes) -> None:
        self.received(data)

    def eof_received(self) -> None:
        self.connection_lost(None)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.done:
            self.done = True
            self.ended()


async def read_pipe(fd: int, received, ended) -> asyncio.ReadTransport:
    transport, _ = await asyncio.get_running_loop().connect_read_pipe(
        lambda: _Reading(received, ended), os.fdopen(fd, "rb", 0))
    return transport
