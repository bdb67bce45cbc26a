#!/bin/sh
# run_if_ibv.sh CHECK COMMAND...: runs COMMAND (an lcrun job with
# LCI_BACKEND=ibv) when CHECK (ibv_check) finds an active verbs port;
# otherwise passes on CHECK's "no active verbs device: skipped" line and its
# exit status 77, which ctest reports as SKIPPED, never as passed.
check="$1"
shift
"$check" || exit $?
exec "$@"
