// Crashes reported as crashes. Debian's libfabric links PSM
// (libinfinipath), whose library constructor catches SIGSEGV, SIGBUS,
// SIGILL, SIGFPE and SIGABRT in every process that loads it: it prints its
// own backtrace, writes a *.btr file into the working directory and calls
// exit(1), so launchers report "exited with status 1" instead of the signal
// and no core is dumped. restore_crash_signals() puts back the default
// action of each of those signals whose handler lies in PSM's libraries
// (libinfinipath*, libpsm*), unless the user asked for PSM's backtraces
// (IPATH_NO_BACKTRACE=0 or HFI_NO_BACKTRACE=0); a handler of the program's
// own is never touched. Called by LCI_initialize (and the LCI 2 runtime's
// first initialization); returns how many handlers it reset.
#pragma once

namespace lci {

int restore_crash_signals();

}  // namespace lci
