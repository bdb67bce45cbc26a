// C entry points of the extensions: waiting policies and fiber pools.
#include <new>

#include "lci.h"
#include "lci/util/log.hpp"
#include "lci/wait/fiber.hpp"
#include "lci/wait/parking.hpp"

struct LCIX_fiber_pool_s {
  lci::fiber_pool pool;
  explicit LCIX_fiber_pool_s(int n) : pool(n) {}
};

LCI_error_t LCIX_set_wait_policy(LCIX_wait_policy_t policy) noexcept try {
  switch (policy) {
    case LCIX_WAIT_THREADS:
    case LCIX_WAIT_SPIN:
    case LCIX_WAIT_FIBERS:
    case LCIX_WAIT_TBB:
      lci::wait_policy_set(policy);
      return LCI_OK;
  }
  return LCI_ERR_FATAL;
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

LCIX_wait_policy_t LCIX_get_wait_policy(void) noexcept try {
  return lci::wait_policy();
} catch (...) {
  lci::fatal_exception(__func__);
}

LCI_error_t LCIX_fiber_pool_create(int nthreads, LCIX_fiber_pool_t* pool) noexcept try {
  if (pool == nullptr || nthreads < 1) return LCI_ERR_FATAL;
  *pool = new LCIX_fiber_pool_s(nthreads);  // throws without memory or threads
  return LCI_OK;
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

LCI_error_t LCIX_fiber_spawn(LCIX_fiber_pool_t pool, void (*fn)(void*), void* arg) noexcept try {
  if (pool == nullptr || fn == nullptr) return LCI_ERR_FATAL;
  pool->pool.spawn(fn, arg);  // throws without memory for the fiber or its stack
  return LCI_OK;
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

LCI_error_t LCIX_fiber_yield(void) noexcept try {
  if (lci::current_fiber() == nullptr) return LCI_ERR_RETRY;
  lci::fiber_yield();
  return LCI_OK;
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

LCI_error_t LCIX_fiber_pool_join(LCIX_fiber_pool_t pool) noexcept try {
  if (pool == nullptr) return LCI_ERR_FATAL;
  pool->pool.join();
  return LCI_OK;
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

LCI_error_t LCIX_fiber_pool_free(LCIX_fiber_pool_t* pool) noexcept try {
  if (pool == nullptr || *pool == nullptr) return LCI_ERR_FATAL;
  delete *pool;
  *pool = nullptr;
  return LCI_OK;
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}
