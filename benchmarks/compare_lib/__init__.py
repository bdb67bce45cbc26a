"""The modules of benchmarks/compare, the benchmark driver (its entry point).

  cli            the command line: picks the subcommand
  common         program name in messages, argument types, the runs'
                 environment, the description of the machine
  runner         finding and launching the benchmark programs (bounded runs,
                 kept outputs, the callgrind wrapper)
  stats          the benchmarks' CSV, medians, best-of, spread, ratios
  output         number formats, compare.csv, Markdown rows
  plot           `plot`, and the SVG/PNG pictures (gnuplot) of all, rate,
                 latency, bandwidth and shm-table from their JSON documents
  tables         `tables`: Markdown tables of the same documents, and the
                 check that a page's tables and SVGs show their numbers
  all_rate       `all` and `rate`
  latency        `latency`
  bandwidth      `bandwidth`
  instructions   `instructions`
  shm_table      `shm-table`, with shm_jobs (its timing runs), shm_callgrind
                 (its instruction counts) and ucx (ucx_perftest pairs)
  apps           `apps`: the application examples (bfs_lci against bfs_mpi,
                 amt_tree on 2 ranks against 1)

Standard library only.
"""
