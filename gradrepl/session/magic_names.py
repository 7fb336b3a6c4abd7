"""The names of the %magics and what kind each is: data only, so the lesson parser and the task rules
read them without importing the session (`gradrepl lessons` imports no event loop)."""

# name -> (usage, method name)
TABLE = {
    "%tensors": ("%tensors", "tensors"),
    "%graph": ("%graph NAME", "graph"),
    "%check": ("%check NAME", "check"),
    "%plot": ("%plot NAME", "plot"),
    "%time": ("%time STMT", "time"),
    "%timeit": ("%timeit STMT", "timeit"),
    "%run": ("%run FILE", "run_file"),
    "%who": ("%who", "who"),
    "%whos": ("%whos", "whos"),
    "%trace": ("%trace NAME|STMT", "trace"),
    "%at": ("%at N", "at"),
    "%history": ("%history", "history"),
    "%restart": ("%restart [-f]", "restart"),
    "%reset": ("%reset [-f]", "reset"),
    "%help": ("%help", "help"),
}
# What a magic that reads a file or runs a program does: a lesson's cells may not (tutor/lesson_parser.py).
READS_FILES = {"%run": "reads a file and runs it"}
RUNS_STATEMENT = {"%time", "%timeit"}  # and %trace STMT: its statement is a numbered step


def runs_statement(source: str) -> bool:
    """`%time STMT`, `%timeit STMT` or `%trace STMT`: a magic line whose argument runs as a statement (not
    `%trace NAME`, which shows a graph). At a task's prompt it is an attempt, judged as that statement."""
    name, _, arg = source.strip().partition(" ")
    arg = arg.strip()
    if name == "%trace":
        return bool(arg) and not all(part.isidentifier() for part in arg.split("."))
    return name in RUNS_STATEMENT and bool(arg)
# A point in the timeline though it runs no code: the steps after %reset show an empty namespace (F3, %at).
CHANGES_NAMESPACE = {"%reset"}
