"""The console: the input box and the log of steps."""
