// acquire()/release(): the process-wide, reference-counted bootstrap.
//
// The state lives on the heap and is never destroyed, so a bootstrap still
// held at exit is not closed by a static destructor racing other threads
// (the launcher notices the exit by itself), just as an instance a program
// leaked before this sharing existed.
#include <memory>
#include <mutex>

#include "lci/bootstrap/bootstrap.hpp"
#include "lci/bootstrap/detail.hpp"

namespace lci::bootstrap {
namespace {

struct shared_state {
  std::mutex mutex;
  std::unique_ptr<bootstrap> instance;
  int references = 0;
};

shared_state& state() {
  static shared_state* s = new shared_state;
  return *s;
}

}  // namespace

bootstrap& acquire() {
  shared_state& s = state();
  std::lock_guard<std::mutex> guard(s.mutex);
  if (s.references == 0) s.instance = open();
  ++s.references;
  return *s.instance;
}

void release() {
  shared_state& s = state();
  std::lock_guard<std::mutex> guard(s.mutex);
  if (s.references == 0) detail::fatal("release: the shared bootstrap is not acquired");
  if (--s.references == 0) s.instance.reset();
}

}  // namespace lci::bootstrap
