"""Learner code that finds the kernel's reply pipe, for tests of what it can and cannot do with it."""

# Defines reply_pipes(): the kernel's write-only pipes above fd 2 (the reply pipe is the only one).
FIND_REPLY_PIPE = (
    "import fcntl, os\n"
    "def reply_pipes():\n"
    "    for fd in range(3, 256):\n"
    "        try:\n"
    "            link = os.readlink(f'/proc/self/fd/{fd}')\n"
    "            mode = fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE\n"
    "        except OSError:\n"
    "            continue\n"
    "        if link.startswith('pipe:') and mode == os.O_WRONLY:\n"
    "            yield fd\n"
)
