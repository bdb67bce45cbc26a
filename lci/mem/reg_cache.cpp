// The registration cache; see reg_cache.hpp for the design.
#include "lci/mem/reg_cache.hpp"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <utility>

#include "lci/util/log.hpp"

namespace lci {

namespace {

constexpr uint64_t count_mask = reg_region::count_mask;
constexpr uint64_t valid_bit = reg_region::valid_bit;
constexpr int gen_shift = reg_region::gen_shift;

inline uint64_t count_of(uint64_t state) noexcept { return state & count_mask; }
inline uint32_t gen_of(uint64_t state) noexcept {
  return static_cast<uint32_t>(state >> gen_shift);
}

// Per-thread hints. Zero-initialized and trivially destructible: no guard on
// access, nothing to do at thread exit (entries hold no references).
constexpr int tls_slots = 4;    // caches (devices) remembered per thread
constexpr int tls_entries = 8;  // regions remembered per cache

struct tls_entry {
  uintptr_t base;
  uintptr_t end;
  reg_region* region;  // nullptr: empty
  uint32_t gen;        // region's generation when remembered
};

struct tls_slot {
  uint64_t cache_id;  // 0: unused; ids are never reused
  unsigned next;      // entry to replace next
  tls_entry entries[tls_entries];
};

struct tls_state {
  tls_slot slots[tls_slots];
  unsigned next_slot;
  unsigned shard;  // 1 + index into hits_; 0: not chosen yet
};

thread_local tls_state t_state;

std::atomic<uint64_t> g_next_id{1};
std::atomic<unsigned> g_next_shard{0};

uintptr_t page_mask_of_system() {
  const long p = sysconf(_SC_PAGESIZE);
  return static_cast<uintptr_t>(p > 0 ? p : 4096) - 1;
}

tls_slot* find_slot(tls_state& st, uint64_t id) noexcept {
  for (tls_slot& s : st.slots)
    if (s.cache_id == id) return &s;
  return nullptr;
}

// Takes a slot for cache `id`: an unused one, else round robin. The evicted
// slot's entries are forgotten, never dereferenced.
tls_slot* attach_slot(tls_state& st, uint64_t id) noexcept {
  tls_slot* s = nullptr;
  for (tls_slot& c : st.slots)
    if (c.cache_id == 0) {
      s = &c;
      break;
    }
  if (s == nullptr) s = &st.slots[st.next_slot++ % tls_slots];
  *s = tls_slot{};
  s->cache_id = id;
  return s;
}

void remember(tls_slot* s, reg_region* r) noexcept {
  tls_entry& e = s->entries[s->next++ % tls_entries];
  e.base = r->base;
  e.end = r->end;
  e.region = r;
  // We hold a use of r, so its generation cannot change under us.
  e.gen = gen_of(r->state.load(std::memory_order_relaxed));
}

// One more use of r if it is still generation `gen` and valid. Acquire on
// success: r's fields, written before it was published, are visible.
inline bool try_ref(reg_region* r, uint32_t gen) noexcept {
  uint64_t s = r->state.load(std::memory_order_relaxed);
  do {
    if (gen_of(s) != gen || !(s & valid_bit)) return false;
    assert(count_of(s) < count_mask);
  } while (!r->state.compare_exchange_weak(s, s + 1, std::memory_order_acquire,
                                           std::memory_order_relaxed));
  return true;
}

}  // namespace

// A registration running without the lock; on the registering thread's stack.
// Linked in pending_ (under mutex_) from before the registration starts
// until its result is inserted or dropped; the guard unlinks it if the
// register callback or an allocation throws.
struct reg_cache::pending {
  uintptr_t base = 0, end = 0;
  bool stale = false;  // an invalidation overlapped it meanwhile
  bool linked = false;
  pending* prev = nullptr;
  pending* next = nullptr;
};

void reg_cache::link_locked(pending* p) noexcept {
  p->prev = nullptr;
  p->next = pending_;
  if (pending_ != nullptr) pending_->prev = p;
  pending_ = p;
  p->linked = true;
}

void reg_cache::unlink_locked(pending* p) noexcept {
  if (!p->linked) return;
  if (p->prev != nullptr)
    p->prev->next = p->next;
  else
    pending_ = p->next;
  if (p->next != nullptr) p->next->prev = p->prev;
  p->linked = false;
}

reg_cache::reg_cache(register_fn reg, deregister_fn dereg, const options& opt)
    : reg_(std::move(reg)),
      dereg_(std::move(dereg)),
      id_(g_next_id.fetch_add(1, std::memory_order_relaxed)),
      page_mask_(page_mask_of_system()),
      cached_(opt.cached),
      max_entries_(std::max<size_t>(opt.max_entries, 1)),
      max_bytes_(opt.max_bytes) {
  for (unsigned i = 0; i < defer_slots; ++i) defer_[i].seq.store(i, std::memory_order_relaxed);
  if (!cached_) return;  // per-use: nothing to invalidate
  index_.reserve(64);
  scratch_.reserve(64);
  listener_.on_invalidate = &reg_cache::on_unmap;
  listener_.context = this;
  mem_hooks::add(&listener_);
}

reg_cache::reg_cache(register_fn reg, deregister_fn dereg, size_t capacity_bytes)
    : reg_cache(std::move(reg), std::move(dereg), options{true, SIZE_MAX, capacity_bytes}) {}

reg_cache::~reg_cache() {
  // After this no hook runs on this cache.
  if (cached_) mem_hooks::remove(&listener_);
  size_t in_use = 0;
  reg_region* r = all_;
  while (r != nullptr) {
    if (r->handle != nullptr) {
      if (count_of(r->state.load(std::memory_order_relaxed)) != 0) ++in_use;
      dereg_(r->handle);
    }
    reg_region* next = r->all_next;
    delete r;
    r = next;
  }
  if (in_use != 0) LCI_WARN("registration cache destroyed with %zu region(s) still in use", in_use);
}

inline void reg_cache::count_hit(unsigned& shard) noexcept {
  if (shard == 0) shard = 1 + g_next_shard.fetch_add(1, std::memory_order_relaxed) % hit_shards;
  hits_[shard - 1].n.fetch_add(1, std::memory_order_relaxed);
}

reg_region* reg_cache::acquire(void* addr, size_t len) {
  const auto a = reinterpret_cast<uintptr_t>(addr);
  const uintptr_t e = a + (len != 0 ? len : 1);
  assert(e > a && "range wraps around the address space");
  if (!cached_) return acquire_uncached(a, e);
  if (work_pending()) collect();
  tls_state& st = t_state;
  tls_slot* s = find_slot(st, id_);
  if (s != nullptr) {
    for (tls_entry& x : s->entries) {
      if (x.region == nullptr || a < x.base || e > x.end) continue;
      reg_region* r = x.region;
      // A matching generation implies r->base/end == x.base/end, except
      // after 2^32 recycles of the object; the check covers that too.
      if (try_ref(r, x.gen)) {
        if (r->base <= a && e <= r->end) {
          count_hit(st.shard);
          const uint64_t now = clock_.load(std::memory_order_relaxed);
          if (r->last_use.load(std::memory_order_relaxed) != now)
            r->last_use.store(now, std::memory_order_relaxed);
          return r;
        }
        release(r);
      }
      x.region = nullptr;  // stale: invalidated or recycled
    }
  }
  return acquire_slow(a, e, s);
}

reg_region* reg_cache::acquire_uncached(uintptr_t a, uintptr_t e) {
  const uintptr_t pa = a & ~page_mask_;
  const uintptr_t pe = (e + page_mask_) & ~page_mask_;
  void* h = reg_(reinterpret_cast<void*>(pa), pe - pa);
  if (h == nullptr) return nullptr;
  auto* r = new reg_region;
  r->base = pa;
  r->end = pe;
  r->handle = h;
  r->per_use = true;
  r->state.store(1, std::memory_order_relaxed);  // invalid (never listed), one use
  registered_bytes_.fetch_add(pe - pa, std::memory_order_relaxed);
  uncached_.fetch_add(1, std::memory_order_relaxed);
  return r;
}

void reg_cache::release(reg_region* r) {
  if (r->per_use) {
    assert(r->state.load(std::memory_order_relaxed) == 1);
    dereg_(r->handle);
    registered_bytes_.fetch_sub(r->end - r->base, std::memory_order_relaxed);
    delete r;
    return;
  }
  // acq_rel: the user's accesses through r happen before the deregistration
  // that the last release (or the invalidator, seeing count 0) performs.
  const uint64_t old = r->state.fetch_sub(1, std::memory_order_acq_rel);
  assert(count_of(old) != 0 && "region released more often than acquired");
  if (count_of(old) == 1 && !(old & valid_bit)) {
    r->next = nullptr;
    retire(r);
  }
  if (work_pending()) collect();
}

reg_region* reg_cache::find_containing(uintptr_t a, uintptr_t e) const noexcept {
  // Last region with base <= a; regions are disjoint, so only it can contain a.
  auto it = std::upper_bound(index_.begin(), index_.end(), a,
                             [](uintptr_t v, const reg_region* r) { return v < r->base; });
  if (it == index_.begin()) return nullptr;
  reg_region* r = *(it - 1);
  return e <= r->end ? r : nullptr;
}

void reg_cache::reserve_locked(std::unique_lock<std::mutex>& lk) {
  while (index_.size() == index_.capacity() || scratch_.capacity() < index_.capacity() ||
         free_ == nullptr) {
    const bool need_index = index_.size() == index_.capacity();
    const size_t want = need_index ? std::max<size_t>(64, 2 * index_.capacity()) : index_.capacity();
    const bool need_scratch = scratch_.capacity() < want;
    const bool need_region = free_ == nullptr;
    lk.unlock();
    std::vector<reg_region*> spare;
    std::vector<candidate> spare_scratch;
    if (need_index) spare.reserve(want);
    if (need_scratch) spare_scratch.reserve(want);
    reg_region* fresh = need_region ? new reg_region : nullptr;
    lk.lock();
    if (fresh != nullptr) {
      fresh->all_next = all_;
      all_ = fresh;
      fresh->next = free_;
      free_ = fresh;
    }
    if (spare.capacity() > index_.capacity()) {
      spare.assign(index_.begin(), index_.end());  // fits: no allocation
      index_.swap(spare);
    }
    if (spare_scratch.capacity() > scratch_.capacity()) scratch_.swap(spare_scratch);
    if (spare.capacity() != 0 || spare_scratch.capacity() != 0) {
      lk.unlock();
      std::vector<reg_region*>().swap(spare);  // free outside the lock
      std::vector<candidate>().swap(spare_scratch);
      lk.lock();
    }
  }
}

namespace {

inline unsigned filter_bit(uintptr_t granule) noexcept {
  return static_cast<unsigned>((granule * 0x9e3779b97f4a7c15ull) >> 52);  // 12 bits
}

}  // namespace

void reg_cache::mark_locked(uintptr_t a, uintptr_t e) noexcept {
  const uintptr_t g0 = a >> filter_shift, g1 = (e - 1) >> filter_shift;
  if (g1 - g0 >= uintptr_t{filter_words} * 64) {
    for (auto& w : filter_) w.store(~uint64_t{0}, std::memory_order_release);
    return;
  }
  for (uintptr_t g = g0; g <= g1; ++g) {
    const unsigned b = filter_bit(g);
    std::atomic<uint64_t>& w = filter_[b / 64];
    const uint64_t m = uint64_t{1} << (b % 64);
    if (!(w.load(std::memory_order_relaxed) & m)) w.fetch_or(m, std::memory_order_release);
  }
}

bool reg_cache::may_cover(uintptr_t a, uintptr_t e) const noexcept {
  const uintptr_t g0 = a >> filter_shift, g1 = (e - 1) >> filter_shift;
  if (g1 - g0 >= 64) return true;  // large ranges: not worth the scan
  for (uintptr_t g = g0; g <= g1; ++g) {
    const unsigned b = filter_bit(g);
    if (filter_[b / 64].load(std::memory_order_acquire) & (uint64_t{1} << (b % 64))) return true;
  }
  return false;
}

void reg_cache::rebuild_filter_locked() noexcept {
  // Every region and pending registration still present was marked when it
  // was added, so the new words are subsets of the old ones: a hook reading
  // a word mid-rebuild may see a bit cleared only if nothing needs it.
  uint64_t words[filter_words] = {};
  auto add = [&](uintptr_t a, uintptr_t e) {
    const uintptr_t g0 = a >> filter_shift, g1 = (e - 1) >> filter_shift;
    if (g1 - g0 >= uintptr_t{filter_words} * 64) {
      for (auto& w : words) w = ~uint64_t{0};
      return;
    }
    for (uintptr_t g = g0; g <= g1; ++g) {
      const unsigned b = filter_bit(g);
      words[b / 64] |= uint64_t{1} << (b % 64);
    }
  };
  for (const reg_region* r : index_) add(r->base, r->end);
  for (const pending* p = pending_; p != nullptr; p = p->next) add(p->base, p->end);
  for (int i = 0; i < filter_words; ++i) filter_[i].store(words[i], std::memory_order_release);
  filter_dropped_ = 0;
}

void reg_cache::defer(uintptr_t a, uintptr_t e) noexcept {
  uint64_t pos = defer_tail_.load(std::memory_order_relaxed);
  for (;;) {
    defer_slot& s = defer_[pos % defer_slots];
    const uint64_t seq = s.seq.load(std::memory_order_acquire);
    const auto diff = static_cast<int64_t>(seq - pos);
    if (diff == 0) {
      if (defer_tail_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
        s.a = a;
        s.e = e;
        s.seq.store(pos + 1, std::memory_order_release);
        break;
      }
    } else if (diff < 0) {
      // Full: the next locked section drops every region instead.
      defer_overflows_.fetch_add(1, std::memory_order_release);
      break;
    } else {
      pos = defer_tail_.load(std::memory_order_relaxed);
    }
  }
  // Release: the slot (or the overflow) is visible to whoever sees this.
  deferred_.fetch_add(1, std::memory_order_release);
}

void reg_cache::apply_deferred_locked(reg_region** retire) noexcept {
  const uint64_t d = deferred_.load(std::memory_order_acquire);
  if (d == applied_.load(std::memory_order_relaxed)) return;
  // Every range counted in d was queued (its slot reserved) before d was
  // bumped, so it lies before defer_tail_ as read now.
  const uint64_t tail = defer_tail_.load(std::memory_order_acquire);
  for (; defer_head_ != tail; ++defer_head_) {
    defer_slot& s = defer_[defer_head_ % defer_slots];
    // A producer between its reservation and its store: a few instructions.
    while (s.seq.load(std::memory_order_acquire) != defer_head_ + 1) sched_yield();
    invalidations_ += invalidate_locked(s.a, s.e, retire, true);
    s.seq.store(defer_head_ + defer_slots, std::memory_order_release);
  }
  const uint64_t o = defer_overflows_.load(std::memory_order_acquire);
  if (o != overflows_applied_) {
    invalidations_ += invalidate_locked(0, ~page_mask_, retire, true);
    overflows_applied_ = o;
  }
  // Release: a hit that reads this sees the regions' valid bits cleared.
  applied_.store(d, std::memory_order_release);
}

reg_region* reg_cache::new_region_locked(uintptr_t b, uintptr_t e, void* h, bool valid) noexcept {
  reg_region* r = free_;
  assert(r != nullptr);
  free_ = r->next;
  r->next = nullptr;
  r->base = b;
  r->end = e;
  r->handle = h;
  const uint64_t gen = gen_of(r->state.load(std::memory_order_relaxed));
  // Release: a thread-local hint that later CASes this word sees the fields.
  r->state.store((gen << gen_shift) | (valid ? valid_bit : 0) | 1, std::memory_order_release);
  return r;
}

size_t reg_cache::invalidate_locked(uintptr_t a, uintptr_t e, reg_region** retire,
                                    bool unmapped) noexcept {
  if (unmapped)
    for (pending* p = pending_; p != nullptr; p = p->next)
      if (p->base < e && a < p->end) p->stale = true;
  // Sorted and disjoint: ends are sorted too.
  auto lo = std::partition_point(index_.begin(), index_.end(),
                                 [a](const reg_region* r) { return r->end <= a; });
  auto hi =
      std::partition_point(lo, index_.end(), [e](const reg_region* r) { return r->base < e; });
  for (auto it = lo; it != hi; ++it) {
    reg_region* r = *it;
    cached_bytes_ -= r->end - r->base;
    // From here no acquire can take a use (see try_ref); if none is held,
    // deregistering is ours, else the last release's.
    const uint64_t old = r->state.fetch_and(~valid_bit, std::memory_order_acq_rel);
    if (count_of(old) == 0) {
      r->next = *retire;
      *retire = r;
    }
  }
  const auto n = static_cast<size_t>(hi - lo);
  index_.erase(lo, hi);
  filter_dropped_ += n;
  return n;
}

size_t reg_cache::evict_locked(const reg_region* keep, reg_region** retire) noexcept {
  // Least recently used unused regions first; scratch_ has room for all.
  scratch_.clear();
  for (reg_region* r : index_)
    if (r != keep && count_of(r->state.load(std::memory_order_relaxed)) == 0)
      scratch_.push_back({r->last_use.load(std::memory_order_relaxed), r});
  std::sort(scratch_.begin(), scratch_.end(),
            [](const candidate& x, const candidate& y) { return x.last_use < y.last_use; });
  const size_t entries_goal = max_entries_ - max_entries_ / 8;
  size_t entries = index_.size();
  size_t n = 0;
  for (const candidate& c : scratch_) {
    reg_region* r = c.region;
    if (entries <= entries_goal && cached_bytes_ <= max_bytes_) break;
    uint64_t s = r->state.load(std::memory_order_relaxed);
    // Only if still unused, atomically against a concurrent hit.
    if (count_of(s) != 0 ||
        !r->state.compare_exchange_strong(s, s & ~valid_bit, std::memory_order_acq_rel))
      continue;
    cached_bytes_ -= r->end - r->base;
    --entries;
    r->next = *retire;
    *retire = r;
    ++n;
  }
  scratch_.clear();
  if (n != 0) {
    // Listed regions are valid, except those just evicted.
    index_.erase(std::remove_if(index_.begin(), index_.end(),
                                [](const reg_region* r) {
                                  return !(r->state.load(std::memory_order_relaxed) & valid_bit);
                                }),
                 index_.end());
    filter_dropped_ += n;
  }
  return n;
}

reg_region* reg_cache::acquire_slow(uintptr_t a, uintptr_t e, void* slot) {
  auto* s = static_cast<tls_slot*>(slot);
  if (s == nullptr) s = attach_slot(t_state, id_);
  const uintptr_t pa = a & ~page_mask_;
  const uintptr_t pe = (e + page_mask_) & ~page_mask_;
  bool merge = true;
  for (;;) {
    pending p;
    struct unlink_guard {
      reg_cache* c;
      pending* p;
      ~unlink_guard() {
        if (p->linked) {
          std::lock_guard<std::mutex> g(c->mutex_);
          c->unlink_locked(p);
        }
      }
    } guard{this, &p};
    reg_region* early_retire = nullptr;
    struct retire_guard {
      reg_cache* c;
      reg_region** list;
      ~retire_guard() { c->retire(*list); }
    } early_guard{this, &early_retire};
    {
      std::lock_guard<std::mutex> g(mutex_);
      apply_deferred_locked(&early_retire);
      if (reg_region* r = find_containing(a, e)) {
        // Listed, hence valid: it cannot be invalidated while we hold the
        // lock, so a plain increment suffices.
        r->state.fetch_add(1, std::memory_order_relaxed);
        r->last_use.store(clock_.load(std::memory_order_relaxed), std::memory_order_relaxed);
        count_hit(t_state.shard);
        remember(s, r);
        return r;
      }
      p.base = pa;
      p.end = pe;
      if (merge) {
        auto lo = std::partition_point(index_.begin(), index_.end(),
                                       [pa](const reg_region* r) { return r->end <= pa; });
        for (auto it = lo; it != index_.end() && (*it)->base < pe; ++it) {
          p.base = std::min(p.base, (*it)->base);
          p.end = std::max(p.end, (*it)->end);
        }
      }
      // Before the registration starts: from now on a hook for these pages
      // takes the locked path (or queues the range) and marks p stale.
      mark_locked(p.base, p.end);
      link_locked(&p);
    }

    void* h = reg_(reinterpret_cast<void*>(p.base), p.end - p.base);

    reg_region* retire_list = nullptr;
    reg_region* result = nullptr;
    bool retry = false;
    {
      std::unique_lock<std::mutex> lk(mutex_);
      reserve_locked(lk);  // may drop the lock: p stays linked meanwhile
      apply_deferred_locked(&retire_list);
      unlink_locked(&p);
      if (h == nullptr) {
        if (!(merge && (p.base != pa || p.end != pe))) return nullptr;
        retry = true;  // try the request alone
      } else if (p.stale && merge) {
        retry = true;
      } else if (p.stale) {
        // Invalidated twice while registering: usable for this one operation.
        result = new_region_locked(p.base, p.end, h, false);
        registered_bytes_.fetch_add(p.end - p.base, std::memory_order_relaxed);
        ++misses_;
        h = nullptr;
      } else if (reg_region* r = find_containing(a, e)) {
        // Another thread registered it meanwhile: use that one, drop ours.
        r->state.fetch_add(1, std::memory_order_relaxed);
        result = r;
        ++misses_;
      } else {
        // Replace every region the new one overlaps (those merged in, and
        // any inserted meanwhile).
        invalidate_locked(p.base, p.end, &retire_list, false);
        // Regions in index_ may no longer overlap [p.base, p.end), which is
        // unlisted now, so the insertion point is well defined.
        auto pos = std::upper_bound(index_.begin(), index_.end(), p.base,
                                    [](uintptr_t v, const reg_region* r) { return v < r->base; });
        result = new_region_locked(p.base, p.end, h, true);
        const uint64_t now = clock_.load(std::memory_order_relaxed) + 1;
        clock_.store(now, std::memory_order_relaxed);
        result->last_use.store(now, std::memory_order_relaxed);
        index_.insert(pos, result);  // capacity reserved: no allocation
        cached_bytes_ += p.end - p.base;
        registered_bytes_.fetch_add(p.end - p.base, std::memory_order_relaxed);
        ++misses_;
        h = nullptr;
        if (over_bounds_locked()) evictions_ += evict_locked(result, &retire_list);
        if (filter_dropped_ > index_.size() + 64) rebuild_filter_locked();
      }
      if (result != nullptr && (result->state.load(std::memory_order_relaxed) & valid_bit))
        remember(s, result);
    }
    if (h != nullptr) dereg_(h);  // dropped: a retry, or someone else's region won
    retire(retire_list);
    if (!retry) return result;
    merge = false;
  }
}

void reg_cache::retire(reg_region* list) {
  if (list == nullptr) return;
  reg_region* last = nullptr;
  for (reg_region* r = list; r != nullptr; r = r->next) {
    dereg_(r->handle);
    registered_bytes_.fetch_sub(r->end - r->base, std::memory_order_relaxed);
    last = r;
  }
  std::lock_guard<std::mutex> g(mutex_);
  for (reg_region* r = list; r != nullptr; r = r->next) {
    r->handle = nullptr;
    // valid == 0 and count == 0: nobody else writes this word now. The new
    // generation makes every thread-local hint of the old one fail.
    const uint64_t gen = gen_of(r->state.load(std::memory_order_relaxed)) + uint64_t{1};
    r->state.store((gen & 0xffffffffu) << gen_shift, std::memory_order_relaxed);
  }
  last->next = free_;
  free_ = list;
}

void reg_cache::invalidate(void* addr, size_t len) {
  if (len == 0 || !cached_) return;
  const auto a = reinterpret_cast<uintptr_t>(addr);
  const uintptr_t pa = a & ~page_mask_;
  const uintptr_t pe = a + len < a ? ~page_mask_ : (a + len + page_mask_) & ~page_mask_;
  reg_region* retire_list = nullptr;
  {
    std::lock_guard<std::mutex> g(mutex_);
    apply_deferred_locked(&retire_list);
    invalidations_ += invalidate_locked(pa, pe, &retire_list, true);
  }
  retire(retire_list);
}

void reg_cache::on_unmap(void* self, uintptr_t addr, size_t len) noexcept {
  auto* c = static_cast<reg_cache*>(self);
  const uintptr_t pa = addr & ~c->page_mask_;
  const uintptr_t pe =
      addr + len < addr ? ~c->page_mask_ : (addr + len + c->page_mask_) & ~c->page_mask_;
  if (pe <= pa || !c->may_cover(pa, pe)) return;  // no lock, no write
  std::unique_lock<std::mutex> lk(c->mutex_, std::try_to_lock);
  if (!lk.owns_lock()) {
    c->defer(pa, pe);
    return;
  }
  reg_region* retire_list = nullptr;
  c->invalidations_ += c->invalidate_locked(pa, pe, &retire_list, true);
  if (retire_list == nullptr) return;
  // Deregistering here would call the network library from inside some
  // arbitrary munmap/madvise: leave it to the next acquire/release/collect.
  reg_region* last = retire_list;
  while (last->next != nullptr) last = last->next;
  last->next = c->zombies_;
  c->zombies_ = retire_list;
  c->zombies_pending_.store(true, std::memory_order_release);
}

void reg_cache::collect() {
  if (!cached_) return;
  const bool zombies = zombies_pending_.exchange(false, std::memory_order_acquire);
  if (!zombies && deferred_.load(std::memory_order_acquire) == applied_.load(std::memory_order_acquire))
    return;
  reg_region* list = nullptr;
  {
    std::lock_guard<std::mutex> g(mutex_);
    apply_deferred_locked(&list);
    if (zombies_ != nullptr) {
      reg_region* last = zombies_;
      while (last->next != nullptr) last = last->next;
      last->next = list;
      list = zombies_;
      zombies_ = nullptr;
    }
  }
  retire(list);
}

reg_cache::stats reg_cache::get_stats() const {
  stats st{};
  for (const shard& h : hits_) st.hits += h.n.load(std::memory_order_relaxed);
  std::lock_guard<std::mutex> g(mutex_);
  st.misses = misses_;
  st.invalidations = invalidations_;
  st.evictions = evictions_;
  st.entries = index_.size();
  st.uncached = uncached_.load(std::memory_order_relaxed);
  st.deferred = deferred_.load(std::memory_order_relaxed);
  st.registered_bytes = registered_bytes_.load(std::memory_order_relaxed);
  return st;
}

caching_decision decide_caching(int use_dreg, bool registrations_pin, bool hooks_active) noexcept {
  if (use_dreg == 0) return {false, "per use (LCI_USE_DREG=0)"};
  if (registrations_pin)
    return {false, "per use (the backend's registrations pin pages, and the hooks miss "
                   "glibc's own unmaps)"};
  if (!hooks_active)
    return {false, "per use (the munmap hooks are not in effect: liblci was dlopen()-ed "
                   "or linked statically)"};
  return {true, "cached (the backend's registrations do not pin pages)"};
}

}  // namespace lci
