/* A C99 program that includes only lct.h and links only liblct: LCT is
 * usable without LCI. Built with -std=c99 -Wall -Wextra -pedantic -Werror
 * (and once more with LCT_DEBUG defined, for the LCT_DBG_* macros).
 * Exits 0 when every check passes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lct.h"

static int failures = 0;

#define EXPECT(cond)                                                \
  do {                                                              \
    if (!(cond)) {                                                  \
      fprintf(stderr, "lct_c99: FAILED at line %d: %s\n", __LINE__, #cond); \
      ++failures;                                                   \
    }                                                               \
  } while (0)

int main(int argc, char** argv) {
  LCT_dict_str_int_t dict[] = {{"a", 1}, {"b", 2}, {"c", 4}};
  LCT_time_t t0;
  LCT_queue_t q;
  LCT_tbarrier_t tb;
  LCT_pcounter_ctx_t pc;
  LCT_pcounter_handle_t h;
  LCT_args_parser_t parser;
  const char* s;
  int n = 5, value = 0;
  char pad[128];

  LCT_init();
  t0 = LCT_now();
  EXPECT(LCT_hostname[0] != '\0');
  EXPECT(LCT_log_get_level(LCT_log_ctx_default) >= LCT_LOG_ERROR);
  LCT_Log(LCT_log_ctx_default, LCT_LOG_TRACE, "c99", "trace %d", 1);
  LCT_Assert(LCT_log_ctx_default, n == 5, "n is %d", n);
  LCT_DBG_Assert(LCT_log_ctx_default, n == 5, "n is %d", n);
  LCT_DBG_Log(LCT_log_ctx_default, LCT_LOG_TRACE, "c99", "debug build %d", 1);
  LCT_DBG_Warn(LCT_log_ctx_default, "debug warn %d", 2);
  LCT_ASSERT_DIFF_CACHE_LINE(&pad[0], &pad[64]);
  EXPECT(LCT_likely(n == 5) && !LCT_unlikely(n != 5));

  q = LCT_queue_alloc(LCT_QUEUE_ARRAY_ATOMIC_FAA, 2);
  LCT_queue_push(q, &n);
  EXPECT(LCT_queue_pop(q) == &n);
  EXPECT(LCT_queue_pop(q) == NULL);
  LCT_queue_free(&q);

  tb = LCT_tbarrier_alloc(1);
  LCT_tbarrier_arrive_and_wait(tb);
  EXPECT(LCT_tbarrier_test(tb, 0));
  LCT_tbarrier_free(&tb);

  pc = LCT_pcounter_ctx_alloc("c99");
  h = LCT_pcounter_register(pc, "n", LCT_PCOUNTER_COUNTER);
  LCT_pcounter_add(pc, h, 3);
  LCT_pcounter_ctx_free(&pc);

  s = LCT_str_replace_all("x-y-z", "-", "::");
  EXPECT(strcmp(s, "x::y::z") == 0);
  free((void*)s);
  EXPECT(LCT_parse_arg(dict, 3, "a+c", "+") == 5);
  EXPECT(LCT_str_int_search(dict, 3, "b", 0, &value) == 1 && value == 2);
  EXPECT(LCT_get_thread_id() == 0 && LCT_get_nthreads() == 1);

  parser = LCT_args_parser_alloc();
  LCT_args_parser_add(parser, "n", 1, &n);
  LCT_args_parser_parse(parser, argc, argv);
  LCT_args_parser_free(parser);
  EXPECT(n == 5);
  EXPECT(LCT_time_to_s(LCT_now() - t0) >= 0.0);
  (void)pad;
  LCT_fina();
  if (failures == 0) printf("lct_c99: ok\n");
  return failures == 0 ? 0 : 1;
}
