"""Learner code that attacks the protocol: forged replies, floods, forged sentinels, hostile objects.

Each test runs on a real kernel through Session and checks what the learner would see:
no fake result, no crash of the frontend, the fault in words, and the next steps answered
in order (never one reply behind).
"""

from __future__ import annotations

import asyncio

from gradrepl.client.pipes import OutputPipe
from gradrepl.protocol.messages import TEXT_CAP
from gradrepl.session import Session
from gradrepl.terminal_text import visible
from tests.support.reply_pipe import FIND_REPLY_PIPE

FIND_NONCE = (
    "import gc\n"
    "nonce = next(o.nonce for o in gc.get_objects() if type(o).__name__ == 'Kernel')\n"
)


async def assert_in_order(session: Session) -> None:
    """Two more steps, each answered with its own result."""
    first = await session.execute("6 * 7")
    second = await session.execute("'in order'")
    assert (first.result, second.result) == ("42", "'in order'"), (first, second)


def assert_broken_in_words(result) -> None:
    assert result.kernel_event and "lost" in result.kernel_event, result
    assert "protocol" in result.kernel_event or "reply" in result.kernel_event, result.kernel_event


async def test_a_forged_reply_is_never_shown_and_the_client_stays_in_step(session):
    await session.execute("kept = 1")
    forge = FIND_REPLY_PIPE + (
        "for fd in reply_pipes():\n"
        "    for guess in range(1, 400):\n"
        "        os.write(fd, ('{\"v\": 1, \"id\": %d, \"type\": \"reply\", \"ok\": true, '\n"
        "                      '\"result\": \"FAKE\", \"notes\": [], \"tensors\": [], \"removed\": []}\\n' % guess).encode())\n"
        "import time\n"
        "time.sleep(1)\n"
        "'real'"
    )
    result = await asyncio.wait_for(session.execute(forge), 60)
    assert result.result != "FAKE"
    assert_broken_in_words(result)
    await assert_in_order(session)


async def test_an_endless_line_on_the_reply_pipe_is_a_broken_kernel_not_a_crash(session):
    flood = FIND_REPLY_PIPE + (
        "chunk = b'x' * (1 << 20)\n"
        "for fd in reply_pipes():\n"
        "    for _ in range(70):\n"
        "        os.write(fd, chunk)\n"
    )
    result = await asyncio.wait_for(session.execute(flood), 60)
    assert_broken_in_words(result)
    await assert_in_order(session)


async def test_a_huge_error_message_is_capped_with_a_note(session):
    result = await asyncio.wait_for(session.execute('raise ValueError("x" * (34 << 20))'), 60)
    assert result.kernel_event is None, result.kernel_event
    assert result.error.type == "ValueError"
    assert len(result.error.message.encode()) <= TEXT_CAP + 200
    assert "more characters" in result.error.message
    assert len(result.error.traceback.encode()) <= TEXT_CAP + 200
    await assert_in_order(session)


async def test_a_huge_warning_is_capped(session):
    result = await session.execute('import warnings\nwarnings.warn("w" * (8 << 20))')
    assert result.kernel_event is None
    assert result.notes and all(len(note.encode()) <= TEXT_CAP + 400 for note in result.notes)
    await assert_in_order(session)


async def test_a_forged_output_sentinel_loses_no_later_output(session):
    forged = FIND_NONCE + (
        "import os\n"
        "os.write(1, f'\\x1egradrepl:{nonce}:not-a-number\\x1e\\n'.encode())\n"
        "os.write(1, f'\\x1egradrepl:{nonce}:999999999999999999999999999999\\x1e\\n'.encode())\n"
        "print('still here')"
    )
    result = await session.execute(forged)
    assert "still here" in result.stdout
    for word in ("one", "two", "three"):
        assert (await session.execute(f"print({word!r})")).stdout == f"{word}\n"
    await assert_in_order(session)


async def test_an_unterminated_sentinel_is_passed_on_as_text(session):
    forged = FIND_NONCE + (
        "import os\n"
        "os.write(1, f'\\x1egradrepl:{nonce}:'.encode() + b'7' * 30 + b'tail\\n')\n"
    )
    result = await session.execute(forged)
    assert result.stdout.endswith("7" * 30 + "tail\n"), result.stdout[-80:]
    assert (await session.execute("print('next')")).stdout == "next\n"


def test_output_framing_reads_a_flood_after_a_lone_prefix_in_one_pass():
    """An unterminated prefix followed by megabytes: each byte is looked at a bounded number of times."""
    pipe = OutputPipe.__new__(OutputPipe)
    OutputPipe.__init__(pipe, -1, "abcd")
    pipe.buffer += pipe.prefix
    pipe._scan()
    for _ in range(64):
        pipe.buffer += b"z" * (1 << 16)
        pipe._scan()
    assert len(pipe.buffer) <= len(pipe.prefix) + 32
    pipe.buffer += pipe.prefix + b"5\x1e\n"
    pipe._scan()
    text, dropped = pipe.finished[5]  # made visible as it is cut: the prefix's \x1e reads as 4 characters
    shown = visible(pipe.prefix.decode())
    assert text.startswith(shown) and len(text) + dropped == len(shown) + 64 * (1 << 16)


async def test_an_exception_whose_str_raises_is_reported_in_words(session):
    source = ("class Sulky(Exception):\n"
              "    def __str__(self):\n"
              "        raise RuntimeError('no words from me')\n"
              "raise Sulky()")
    result = await asyncio.wait_for(session.execute(source), 60)
    assert result.kernel_event is None
    assert result.error.type == "Sulky"
    assert "could not be shown" in result.error.message
    await assert_in_order(session)


async def test_an_exception_whose_str_hangs_is_reported_and_the_next_step_is_unharmed(session):
    source = ("import time\n"
              "class Stuck(Exception):\n"
              "    def __str__(self):\n"
              "        time.sleep(3600)\n"
              "raise Stuck()")
    pid = session.kernel_info["pid"]
    result = await asyncio.wait_for(session.execute(source), 60)
    assert result.kernel_event is None, result.kernel_event
    assert result.error.type == "Stuck" and "could not be shown" in result.error.message
    assert session.kernel_info["pid"] == pid
    await assert_in_order(session)


async def test_a_hanging_str_interrupted_by_the_learner_harms_no_later_step(session):
    source = ("import time\n"
              "class Stuck(Exception):\n"
              "    def __str__(self):\n"
              "        time.sleep(3600)\n"
              "raise Stuck()")
    task = asyncio.create_task(session.execute(source))
    await asyncio.sleep(1.0)
    await session.interrupt()
    result = await asyncio.wait_for(task, 60)
    assert result.error is not None
    pid = session.kernel_info["pid"]
    await asyncio.sleep(2.5)            # longer than the interrupt grace
    await assert_in_order(session)
    assert session.kernel_info["pid"] == pid, "a later step was killed for the interrupted one"


async def test_objects_whose_attributes_raise_or_sleep_are_reported_in_words(session):
    raising = ("class Prickly:\n"
               "    def __getattribute__(self, name):\n"
               "        raise RuntimeError('touch me not')\n"
               "    def __repr__(self):\n"
               "        return 'Prickly'\n"
               "p = Prickly()\n"
               "[p]")
    first = await asyncio.wait_for(session.execute(raising), 60)
    assert first.kernel_event is None and first.error is None, first
    sleeping = ("import time\n"
                "class Drowsy:\n"
                "    def __getattribute__(self, name):\n"
                "        time.sleep(3600)\n"
                "    def __repr__(self):\n"
                "        time.sleep(3600)\n"
                "d = [Drowsy()]\n"
                "d")
    second = await asyncio.wait_for(session.execute(sleeping), 60)
    assert second.kernel_event is None, second.kernel_event
    assert "could not be shown" in (second.result or "")
    await assert_in_order(session)
    await session.execute("del d, p")
