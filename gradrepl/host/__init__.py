"""What both processes know about this machine, with the standard library alone: a kernel's default
budgets and the sizes the flags give (budgets.py), the folders Python imports from (import_path.py),
the scratch folder's name and owner (scratch.py), and where a kernel's pids cgroup lives (cgroups.py).
The frontend uses them before it starts a kernel, the zygote and the sandbox after; neither side's
room is imported from here."""
