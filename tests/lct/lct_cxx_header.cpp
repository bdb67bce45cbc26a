// lct.h compiles as C++ with -Wall -Wextra -pedantic -Werror and links
// with liblct alone.
#include "lct.h"

int main() {
  LCT_init();
  LCT_time_t t = LCT_now();
  LCT_Log(LCT_log_ctx_default, LCT_LOG_TRACE, "cxx", "time %lld", static_cast<long long>(t));
  LCT_fina();
  return t >= 0 ? 0 : 1;
}
