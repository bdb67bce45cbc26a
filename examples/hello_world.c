/*
 * hello_world.c - the smallest LCI program.
 *
 * Shows the life cycle every LCI program follows:
 *   LCI_initialize  - collective; sets LCI_RANK / LCI_NUM_PROCESSES and creates
 *                     the default device, endpoint and completion queue;
 *   LCI_barrier     - collective; waits until every process got there;
 *   LCI_finalize    - collective; releases everything LCI created.
 *
 * Run:  lcrun -n 4 ./hello_world
 * Exits 0 if the rank and size LCI reports are consistent.
 */
#include <stdio.h>

#include "lci.h"

int main(void) {
  int flag = -1;
  int ok = 1;

  /* LCI_initialized may be called at any time, even before LCI_initialize. */
  LCI_initialized(&flag);
  if (flag != 0) ok = 0;

  LCI_initialize();
  LCI_initialized(&flag);
  if (flag != 1) ok = 0;
  if (LCI_NUM_PROCESSES < 1 || LCI_RANK < 0 || LCI_RANK >= LCI_NUM_PROCESSES) ok = 0;

  printf("hello from rank %d of %d\n", LCI_RANK, LCI_NUM_PROCESSES);
  fflush(stdout);

  /* Nobody leaves before everybody said hello. */
  LCI_barrier();

  if (LCI_RANK == 0) printf("hello_world: %s\n", ok ? "PASS" : "FAIL");
  else if (!ok) printf("hello_world: rank %d FAIL\n", LCI_RANK);

  LCI_finalize();
  return ok ? 0 : 1;
}
