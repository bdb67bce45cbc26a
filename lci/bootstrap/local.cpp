// The local bootstrap: a process started by hand is rank 0 of a job of one.
// put/get go through an in-process map; fence and barrier have nobody to
// wait for. Thread-safe, like pmi1, so callers need not care which they got.
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>

#include "lci/bootstrap/bootstrap.hpp"
#include "lci/bootstrap/detail.hpp"

namespace lci::bootstrap {
namespace {

class local final : public bootstrap {
 public:
  const char* name() const override { return "local"; }
  int rank() const override { return 0; }
  int size() const override { return 1; }

  void put(const std::string& key, const std::string& value) override {
    detail::check_key("put", key);
    detail::check_value("put", key, value);
    std::lock_guard<std::mutex> lock(mutex_);
    values_[key] = value;
  }

  void fence() override {}
  void barrier() override {}

  std::string get(int rank, const std::string& key) override {
    detail::check_key("get", key);
    if (rank != 0)
      detail::fatal("get: rank " + std::to_string(rank) +
                    " does not exist in a job of one process (local bootstrap)");
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = values_.find(key);
      if (it != values_.end()) return it->second;
    }
    abort(1, "get: rank 0 put no value under key '" + key + "'");
  }

  [[noreturn]] void abort(int code, const std::string& message) override {
    std::fflush(stdout);
    std::fprintf(stderr, "lci: rank 0 aborted (code %d): %s\n", code, message.c_str());
    std::fflush(stderr);
    std::_Exit(detail::abort_status(code));
  }

 private:
  std::mutex mutex_;
  std::map<std::string, std::string> values_;
};

}  // namespace

namespace detail {
std::unique_ptr<bootstrap> open_local() { return std::make_unique<local>(); }
}  // namespace detail

}  // namespace lci::bootstrap
