"""When Enter runs the input and where a paste splits: the rules every frontend shares."""

from gradrepl.completeness import is_complete, next_indent, split_pasted


def test_enter_runs_only_complete_statements():
    assert is_complete("x = torch.tensor(2.0, requires_grad=True)")
    assert not is_complete("for i in range(3):")
    assert not is_complete("for i in range(3):\n    y = y * 2")
    assert not is_complete("with torch.no_grad():\n    y = x * 2")  # a block needs its blank line
    assert is_complete("def f(x):\n    return x\n")
    assert not is_complete("y = (x +")
    assert not is_complete("   ")
    assert is_complete("%graph y")
    assert is_complete("a = 1\nb = 2")  # a pasted block runs as a whole
    assert is_complete("x = = 1")  # broken beyond repair: let the kernel say why


def test_a_whitespace_only_last_line_ends_the_block():
    assert is_complete("for i in range(3):\n    y = y * 2\n    ")
    assert is_complete("with torch.no_grad():\n    y = x * 2\n\t")


def test_help_lines_are_complete():
    for line in ("x?", "torch.zeros??", "?x.grad", "  nn.Linear ? "):
        assert is_complete(line), line


def test_several_statements_wait_while_the_last_is_open():
    assert not is_complete("a = 1\nfor i in range(3):\n    a += i")
    assert is_complete("a = 1\nfor i in range(3):\n    a += i\n")
    assert is_complete("for i in range(3):\n    pass\nprint(i)")


def test_auto_indent_after_colon_and_out_after_return():
    assert next_indent("def f(x):") == "    "
    assert next_indent("    if x > 0:  # positive") == "        "
    assert next_indent("        return x") == "    "
    assert next_indent("    y = x") == "    "
    assert next_indent("def f():\n    if x:") == "        "  # only the last line counts


def test_a_paste_splits_into_top_level_blocks():
    pasted = ("def f(x):\n    y = x\n\n    return y\n\nprint(f(1))\n@torch.no_grad()\ndef g():\n    pass\n"
              "if a:\n    b\nelse:\n    c\nx = (1,\n2)\nz = 1; w = 2\n")
    assert split_pasted(pasted) == [
        "def f(x):\n    y = x\n\n    return y", "print(f(1))", "@torch.no_grad()\ndef g():\n    pass",
        "if a:\n    b\nelse:\n    c", "x = (1,\n2)", "z = 1; w = 2"]


def test_an_unfinished_paste_keeps_its_tail_in_the_last_block():
    assert split_pasted("x = 1\ns = '''\nabc") == ["x = 1", "s = '''\nabc"]
    assert split_pasted("try:\n    a\nexcept E:\n    b\n") == ["try:\n    a\nexcept E:\n    b"]
    assert split_pasted("") == []
