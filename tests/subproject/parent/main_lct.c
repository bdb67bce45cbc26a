/* LCT alone from the subproject. */
#include <lct.h>
#include <stdio.h>

int main(void) {
  LCT_init();
  LCT_time_t t0 = LCT_now();
  int ok = LCT_time_to_ns(LCT_now() - t0) >= 0.0;
  LCT_fina();
  printf("parent_app_lct %s\n", ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
