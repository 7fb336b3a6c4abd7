"""One module per `gradrepl` subcommand: each has `register(subparsers)` and `run(args) -> int`."""
