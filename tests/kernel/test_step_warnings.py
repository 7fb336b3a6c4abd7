"""Warnings become step notes as Python's filters decide (issue 24): by default once per location, inside a
step and across steps, as `python` shows them for one script; filters the learner sets stay set."""

import subprocess
import sys


async def test_a_warning_in_a_loop_is_one_note_as_python_shows_it_once(session):
    await session.execute("import warnings\ndef careful():\n    warnings.warn('careful')")
    loop = await session.execute("for i in range(2000):\n    careful()")
    assert [note for note in loop.notes if "careful" in note] == ["UserWarning: careful"], loop.notes
    again = await session.execute("careful()")
    assert not [note for note in again.notes if "careful" in note], again.notes  # same place: shown already
    elsewhere = await session.execute("warnings.warn('careful')")
    assert len([note for note in elsewhere.notes if "careful" in note]) == 1  # another line: shown once


async def test_a_torch_warning_in_a_training_loop_is_one_note(session):
    await session.execute("x = torch.ones(2, requires_grad=True)\ny = x * 2")
    loop = await session.execute("for _ in range(500):\n    g = y.grad")
    notes = [note for note in loop.notes if "non-leaf" in note]
    assert len(notes) == 1 and "retain_grad" in notes[0], loop.notes


async def test_filters_the_learner_sets_are_followed_and_stay_set(session):
    await session.execute("import warnings\nwarnings.simplefilter('always')")
    loud = await session.execute("for i in range(3):\n    warnings.warn('each time')")
    assert len([note for note in loud.notes if "each time" in note]) == 3
    await session.execute("warnings.simplefilter('ignore')")
    quiet = await session.execute("warnings.warn('never shown')")
    assert not quiet.notes, quiet.notes


def test_python_shows_the_loops_warning_once_too(tmp_path):
    """What the notes follow: `python FILE` on the same loop prints the warning once."""
    script = tmp_path / "loop.py"
    script.write_text("import warnings\ndef careful():\n    warnings.warn('careful')\n"
                      "for i in range(2000):\n    careful()\ncareful()\n")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert done.stderr.count("UserWarning: careful") == 1
