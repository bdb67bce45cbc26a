// The /dev/shm files behind libfabric's shm provider.
//
// By default the shm provider names an endpoint's region after the process
// id, /dev/shm/<pid>:<uid>:<index>, and fi_enable fails (EBUSY) when that
// file exists and is not provably stale: a file left by a dead process whose
// pid was reused, or one that another local user created on purpose for a
// pid they predict, would stop an LCI process from starting. So the ofi
// backend names each shm endpoint itself, before fi_enable (fi_setname):
//
//   address  fi_shm://lci-<pid>-<16 random hex digits>
//   file     /dev/shm/lci-<pid>-<16 random hex digits>
//
// 64 random bits make the name impossible to predict or to meet by chance,
// so no leftover of any earlier process can collide with it. The pid lets a
// launcher that knows its ranks' pids (tools/lcrun) find the files of a rank
// that died without removing them (SIGKILL); lcrun relies on the
// "lci-<pid>-" prefix.
//
// Removal: fi_close of the endpoint (LCI_finalize) unlinks the file; the
// provider's own handlers do on SIGTERM, SIGINT, SIGSEGV and SIGBUS; and
// exit() without LCI_finalize runs remove_at_exit (atexit) for the files of
// the endpoints still open. What no process can do for itself is left: a
// rank killed by SIGKILL, or ended by abort() or _exit(). lcrun removes those
// files after the rank is gone; under other launchers they stay until the
// next reboot (or someone deletes them), and, their names being random, they
// never stop a later job.
//
// Thread safety: track/untrack may be called from any thread; the table is
// guarded by a mutex and never destroyed, so the exit handler can still use
// it after static destructors have run.
#pragma once

#include <string>

namespace lci::ofi {

// A fresh region name, "lci-<pid>-<16 hex digits>" (without the fi_shm://
// prefix), different on every call.
std::string make_shm_file_name();

// The libfabric address that names the region `file`: "fi_shm://<file>".
std::string shm_address(const std::string& file);

// Registers /dev/shm/<file> of an enabled endpoint for removal at exit(),
// and withdraws it once the endpoint is closed.
void track_shm_file(const std::string& file);
void untrack_shm_file(const std::string& file);

}  // namespace lci::ofi
