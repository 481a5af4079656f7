"""Groups of ``costmodel`` subcommands kept out of ``cli.py``; ``cli.main`` registers them
(``main.add_command(sensitivity)`` from :mod:`costmodel.commands.sensitivity`)."""
