"""The plain REPL driven through prompt_toolkit's pipe input."""

from __future__ import annotations

import asyncio

from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from gradrepl.plain.repl import build_prompt, repl


async def drive(session, chunks, pause=0.3):
    """Run the plain REPL on a pipe; each chunk arrives apart from the others, as typed keys do
    (a chunk with several lines is a paste without bracketed paste). A callable chunk is a
    condition on the input buffer to wait for."""
    with create_pipe_input() as pipe:
        prompt = build_prompt(session, input=pipe, output=DummyOutput())
        task = asyncio.create_task(repl(session, prompt))
        try:
            while session.state != "idle":
                await asyncio.sleep(0.05)
            for chunk in chunks + ["\x04", "\x04"]:  # Ctrl-D twice: no question in the way
                await asyncio.sleep(pause)
                if callable(chunk):
                    await asyncio.wait_for(until(lambda: chunk(prompt.default_buffer)), 30)
                    continue
                pipe.send_text(chunk)
                while session.state == "busy":
                    await asyncio.sleep(0.05)
            return await asyncio.wait_for(task, 60)
        finally:
            await session.close()


async def typed_ahead(session, lines) -> int:
    """Run the plain REPL on a pipe that holds `lines` (each ended by Enter) and Ctrl-D twice before it
    starts; close the session after; the REPL's exit status."""
    with create_pipe_input() as pipe:
        prompt = build_prompt(session, input=pipe, output=DummyOutput())
        for line in lines:
            pipe.send_text(line + "\r")
        pipe.send_text("\x04\x04")  # Ctrl-D asks (the names would be lost), Ctrl-D again quits
        try:
            return await repl(session, prompt)
        finally:
            await session.close()


async def until(condition):
    while not condition():
        await asyncio.sleep(0.05)
