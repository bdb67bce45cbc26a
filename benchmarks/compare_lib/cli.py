"""The command line: `compare [SUBCOMMAND] [OPTIONS]`, `all` by default."""
import sys

from . import all_rate, apps, bandwidth, common, instructions, latency, plot, shm_table, tables


def main(overview, here):
    """Runs the subcommand named by the first argument. overview: the text
    of `compare --help` (the entry script's docstring); here: the directory
    of the entry script."""
    common.HERE = here
    argv = sys.argv[1:]
    sub = "all"
    if argv and argv[0] in common.SUBCOMMANDS:
        sub, argv = argv[0], argv[1:]
        common.PROG = f"compare {sub}"
    elif argv and not argv[0].startswith("-"):
        # A word that names no subcommand: `all` takes no positional
        # arguments, so this is a typo, not options of `all`.
        print(f"compare: unknown subcommand '{argv[0]}'; the subcommands are: "
              + ", ".join(common.SUBCOMMANDS) + " (`compare SUBCOMMAND --help` for each)",
              file=sys.stderr)
        sys.exit(2)
    if sub == "all":
        all_rate.run(argv, overview)
    elif sub == "rate":
        all_rate.run(argv, overview, rate_only=True)
    elif sub == "latency":
        latency.run(argv)
    elif sub == "bandwidth":
        bandwidth.run(argv)
    elif sub == "shm-table":
        shm_table.run(argv)
    elif sub == "apps":
        apps.run(argv)
    elif sub == "plot":
        plot.run(argv)
    elif sub == "tables":
        tables.run(argv)
    else:
        instructions.run(argv)
