"""What several test folders share: paths, the CLI runner, pty, process and serve helpers, TUI waits."""
