"""When Enter runs the input and where a paste splits: the rules every frontend shares."""

from gradrepl.completeness import help_request, is_complete, next_indent, split_pasted


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
        assert is_complete(line) and help_request(line), line
    for line in ("# why?", "print('why?')", "x = 1\ny?"):
        assert not help_request(line), line


def test_only_an_expression_followed_by_marks_outside_comments_and_strings_is_help():
    assert help_request("x.grad??") == ("x.grad", True)
    assert help_request("?? nn.Linear") == ("nn.Linear", True)
    assert help_request("x?  # what is x?") == ("x", False)
    assert help_request("d['a?']?") == ("d['a?']", False)
    for code in ("n = 3  # how many?", "n = 3 ?", "x = 'why?'  # really?", "x??? ", "?x?", "a ? b",
                 '"""open?', "for i in x?", "x = (1 +\n 2)?", "# how many?\n"):
        assert help_request(code) is None, code
    assert is_complete("n = 3  # how many?")


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
