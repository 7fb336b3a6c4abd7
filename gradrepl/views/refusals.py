"""The words for what the kernel's sandbox and limits refused (kernel/sandbox/refusals.py sends a
code and the folders or caps its words need), and for the kernel's own ends of a step."""

from gradrepl.views.templates import filled

REFUSALS = {
    "no_network_lookup":
        "The tutor's kernel has no network, so host names cannot be looked up and nothing can be "
        "downloaded (start gradrepl with --allow-network to allow it).",
    "no_network":
        "The tutor's kernel has no network: connections fail at once, to any address "
        "(start gradrepl with --allow-network to allow it).",
    "read_only_outside":
        "Outside {places} (the current folder) files are read-only for learner code: nothing there "
        "can be written, and no permissions, owners, times or extended attributes changed. "
        "Relative paths like 'model.pt' work.",
    "write_outside":
        "Learner code may write files only in {places} (the current folder), so relative paths "
        "like 'model.pt' work; elsewhere files can only be read.",
    "read_only_script_folder":
        "The current folder {cwd} (the script's folder) can be read but not written by learner code: "
        "files can be made only in {places}. Start gradrepl with --workspace {cwd} to let "
        "the script write beside itself, or write elsewhere by an absolute path (tempfile.gettempdir() is "
        "scratch).",
    "read_refused":
        "Reads are limited too: learner code may read only Python and its libraries, the course, "
        "{given}and {places}; not your home folder, other terminals or system secrets. Start "
        "gradrepl with --readable DIR to let it read another folder. Files you make go in {places}.",
    "scratch_files_used":
        "The scratch folder {scratch} holds at most {files} files and folders in all "
        "(one per {per_file} of --disk-limit), and every one is used. "
        "Delete files you no longer need (os.remove, shutil.rmtree) or start gradrepl with a larger "
        "--disk-limit.",
    "scratch_full":
        "The scratch folder {scratch} is full: it holds at most its --disk-limit in total. "
        "Delete files you no longer need (os.remove) or start gradrepl with a larger --disk-limit.",
    "thread_limit":
        "The kernel runs at most {threads} threads at once, and no other could start. "
        "Let threads you no longer need finish (thread.join()), or start fewer.",
    "no_processes":
        "Learner code cannot start programs or new processes in the tutor's kernel (threads work). "
        "For a DataLoader, use num_workers=0.",
    "syscall_refused":
        "The sandbox refused this operation: learner code cannot start programs, signal other "
        "processes, change the kernel's limits, watch files (inotify, fanotify), make SysV shared "
        "memory, or open UNIX sockets (only internet ones, with --allow-network).",
    "memory_limit":
        "The kernel reached its memory limit (--memory-limit), so the allocation failed. "
        "Your variables are kept: delete big ones (del name) or make tensors smaller.",
    "sys_exit_in_session":
        "sys.exit() ends a script, not the tutor: the kernel keeps running and your variables are kept.",
    "interrupted":
        "The step was interrupted; variables assigned before that point are kept.",
}


def refusal_words(code: str | None, names: dict | None = None) -> str | None:
    """The words for a refusal code with its names, or None for a code this frontend does not know
    (or names from another version of the kernel)."""
    return filled(REFUSALS, code, names)
