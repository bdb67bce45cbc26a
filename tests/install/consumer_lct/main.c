/* LCT without LCI: time, a queue, the thread barrier with one thread, the
 * argument dictionary and the PMI of a one-process job. */
#include <lct.h>
#include <stdio.h>
#include <string.h>

int main(void) {
  int ok = 1;
  LCT_init();
  LCT_time_t t0 = LCT_now();
  LCT_queue_t q = LCT_queue_alloc(LCT_QUEUE_ARRAY_ATOMIC_FAA, 8);
  int a = 1, b = 2;
  LCT_queue_push(q, &a);
  LCT_queue_push(q, &b);
  ok = ok && LCT_queue_pop(q) == &a && LCT_queue_pop(q) == &b && LCT_queue_pop(q) == NULL;
  LCT_queue_free(&q);
  LCT_dict_str_int_t dict[] = {{"x", 1}, {"y", 2}, {"z", 4}};
  ok = ok && LCT_parse_arg(dict, 3, "x,z", ",") == 5;
  LCT_tbarrier_t bar = LCT_tbarrier_alloc(1);
  LCT_tbarrier_arrive_and_wait(bar);
  LCT_pmi_initialize();
  ok = ok && LCT_pmi_get_size() == 1 && LCT_pmi_get_rank() == 0;
  char key[] = "greeting", value[] = "hello", got[LCT_PMI_STRING_LIMIT + 1];
  LCT_pmi_publish(key, value);
  LCT_pmi_barrier();
  LCT_pmi_getname(0, key, got);
  ok = ok && strcmp(got, "hello") == 0;
  LCT_pmi_finalize();
  ok = ok && LCT_now() >= t0;
  LCT_fina();
  printf("consumer_lct %s\n", ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
