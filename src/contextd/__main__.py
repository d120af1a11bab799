"""`python -m contextd` runs the CLI."""

from contextd.cli.main import main

main()
