/*
 * halo_exchange.c - 1-D halo exchange on a ring with one-sided long puts.
 *
 * A periodic 2-D grid of NPROC*ROWS rows by COLS columns is split into slabs
 * of ROWS rows, rank r owning rows r*ROWS .. r*ROWS+ROWS-1; its neighbours
 * are r-1 ("up") and r+1 ("down"), modulo the number of ranks. Each rank
 * keeps its slab in an array of ROWS+2 rows: row 0 and row ROWS+1 are the
 * two ghost regions holding copies of the neighbours' boundary rows. A
 * Jacobi step reads one such array and writes the interior of another, so
 * there are two of them, used in turn (grid[0], grid[1]).
 *
 * Shows:
 *   - LCI_memory_register of the arrays (one segment), then
 *     LCI_segment_serialize and a medium message (LCI_sendm/LCI_recvm) that
 *     carries the string and the array's address to each neighbour, which
 *     turns it into a remote segment handle with LCI_segment_deserialize;
 *   - LCI_putl of a boundary row straight into the neighbour's ghost row,
 *     with remote completion LCI_DEFAULT_COMP_REMOTE: the neighbour learns
 *     that the row is in place from its endpoint's default completion queue
 *     (LCI_UR_CQ for LCI_UR_ENDPOINT), no receive needed; the origin's
 *     completion (a queue of its own) says the row may be overwritten.
 *   - why two arrays make it race-free without any extra message: the rows
 *     for step k land in the ghost rows of the target's grid[k % 2]; the
 *     target may still be in step k-1, which writes only the interior of
 *     that array; and they are put only after the neighbour's rows for step
 *     k-1 arrived, which the neighbour sent once it had finished step k-2,
 *     the last step that read those ghost rows.
 *
 * Every rank also runs the same Jacobi steps serially on the whole grid and
 * compares its slab with that result.
 * Run:  lcrun -n 4 ./halo_exchange [steps]
 * Exits 0 if every rank's slab equals the serial result.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lci.h"

#define ROWS 32   /* rows per rank */
#define COLS 2048 /* doubles per row: each put moves 16 KiB */
#define ROW_BYTES (COLS * sizeof(double))

enum { UP = 0, DOWN = 1 }; /* direction of a put, seen from its origin */
#define TAG_ADDR 1         /* + direction: segment exchange */
#define TAG_HALO 10        /* + 2 * (step parity) + direction: halo rows */

/* What a rank tells a neighbour about its arrays. */
struct remote_info {
  char segment[256]; /* LCI_segment_serialize output */
  uint64_t address;  /* address of grid[0]; grid[1] follows it */
};

static double initial(long row, long col) { return (double)((row * 37 + col * 11) % 101); }

/* One Jacobi step on a grid whose rows above and below `row` exist. */
static double stencil(const double* above, const double* here, const double* below, int c) {
  int left = (c + COLS - 1) % COLS, right = (c + 1) % COLS;
  return 0.2 * (here[c] + above[c] + below[c] + here[left] + here[right]);
}

static void wait_queue(LCI_comp_t cq, LCI_request_t* req) {
  while (LCI_queue_pop(cq, req) == LCI_ERR_RETRY) LCI_progress(LCI_UR_DEVICE);
}

int main(int argc, char** argv) {
  int steps = argc > 1 ? atoi(argv[1]) : 10;
  int nproc, rank, up, down, k, r, c, d, errors = 0;
  size_t grid_doubles;
  double *mem, *grid[2], *serial, *serial_next, max_diff = 0;
  LCI_segment_t seg, remote_seg[2];
  LCI_comp_t local_cq;
  struct remote_info mine, theirs[2];
  uint64_t remote_addr[2];
  int arrived[2] = {0, 0}; /* ghost rows arrived, by step parity */

  LCI_initialize();
  nproc = LCI_NUM_PROCESSES;
  rank = LCI_RANK;
  up = (rank + nproc - 1) % nproc;
  down = (rank + 1) % nproc;
  LCI_queue_create(LCI_UR_DEVICE, &local_cq);

  /* Both arrays in one allocation, registered once. */
  grid_doubles = (size_t)(ROWS + 2) * COLS;
  mem = malloc(2 * grid_doubles * sizeof(double));
  grid[0] = mem;
  grid[1] = mem + grid_doubles;
  for (r = 1; r <= ROWS; r++)
    for (c = 0; c < COLS; c++)
      grid[0][(size_t)r * COLS + c] = initial((long)rank * ROWS + r - 1, c);
  LCI_memory_register(LCI_UR_DEVICE, mem, 2 * grid_doubles * sizeof(double), &seg);

  /* Tell both neighbours where the arrays are (medium messages). With two
   * ranks "up" and "down" are the same process: the tag tells them apart. */
  memset(&mine, 0, sizeof(mine));
  LCI_segment_serialize(seg, mine.segment);
  mine.address = (uint64_t)(uintptr_t)mem;
  for (d = 0; d < 2; d++) {
    LCI_mbuffer_t into;
    into.address = &theirs[d];
    into.length = sizeof(theirs[d]);
    /* theirs[UP] comes from "up", which sent it in its DOWN direction. */
    LCI_recvm(LCI_UR_ENDPOINT, into, d == UP ? up : down, TAG_ADDR + (d == UP ? DOWN : UP),
              LCI_UR_CQ, NULL);
  }
  for (d = 0; d < 2; d++) {
    LCI_mbuffer_t msg;
    msg.address = &mine;
    msg.length = sizeof(mine);
    while (LCI_sendm(LCI_UR_ENDPOINT, msg, d == UP ? up : down, TAG_ADDR + d) == LCI_ERR_RETRY)
      LCI_progress(LCI_UR_DEVICE);
  }
  for (d = 0; d < 2; d++) {
    LCI_request_t req;
    wait_queue(LCI_UR_CQ, &req);
    if (req.flag != LCI_OK || req.data.mbuffer.length != sizeof(struct remote_info)) errors++;
  }
  for (d = 0; d < 2; d++) {
    if (LCI_segment_deserialize(theirs[d].segment, &remote_seg[d]) != LCI_OK) errors++;
    remote_addr[d] = theirs[d].address;
  }

  /* Step k reads grid[k % 2] and writes grid[(k + 1) % 2]. First the
   * boundary rows of grid[k % 2] go to the neighbours' ghost rows of their
   * grid[k % 2]: my first row is "up"'s bottom ghost row, my last row
   * "down"'s top ghost row. */
  for (k = 0; k < steps; k++) {
    const int p = k % 2;
    double* cur = grid[p];
    double* next = grid[1 - p];
    int local_done = 0;
    for (d = 0; d < 2; d++) {
      const size_t src_row = d == UP ? 1 : ROWS;
      const size_t dst_row = d == UP ? ROWS + 1 : 0;
      LCI_lbuffer_t row, ghost;
      row.segment = seg;
      row.address = cur + src_row * COLS;
      row.length = ROW_BYTES;
      ghost.segment = remote_seg[d];
      ghost.address =
          (void*)(uintptr_t)(remote_addr[d] +
                             ((size_t)p * grid_doubles + dst_row * COLS) * sizeof(double));
      ghost.length = ROW_BYTES;
      while (LCI_putl(LCI_UR_ENDPOINT, row, local_cq, d == UP ? up : down,
                      (LCI_tag_t)(TAG_HALO + 2 * p + d), ghost, LCI_DEFAULT_COMP_REMOTE,
                      NULL) == LCI_ERR_RETRY)
        LCI_progress(LCI_UR_DEVICE);
    }
    /* Wait for our two puts (their rows are rewritten in the next step) and
     * for the neighbours' two rows of this step. Rows of step k+1 may come
     * first: a neighbour can be one step ahead, never two. */
    while (local_done < 2 || arrived[p] < 2) {
      LCI_request_t req;
      LCI_progress(LCI_UR_DEVICE);
      if (LCI_queue_pop(local_cq, &req) == LCI_OK) {
        if (req.flag != LCI_OK || req.type != LCI_LONG) errors++;
        local_done++;
      }
      if (LCI_queue_pop(LCI_UR_CQ, &req) == LCI_OK) {
        /* Put by a neighbour in its direction `dir`, for step parity `q`. */
        const int q = ((int)req.tag - TAG_HALO) / 2, dir = ((int)req.tag - TAG_HALO) % 2;
        const size_t ghost_row = dir == UP ? ROWS + 1 : 0;
        if (req.tag < TAG_HALO || q > 1) {
          errors++;
          continue;
        }
        if (req.flag != LCI_OK || req.type != LCI_LONG || req.rank != (dir == UP ? down : up) ||
            req.data.lbuffer.segment != seg || req.data.lbuffer.length != ROW_BYTES ||
            req.data.lbuffer.address != grid[q] + ghost_row * COLS)
          errors++;
        arrived[q]++;
      }
    }
    arrived[p] = 0;
    for (r = 1; r <= ROWS; r++)
      for (c = 0; c < COLS; c++)
        next[(size_t)r * COLS + c] = stencil(cur + (size_t)(r - 1) * COLS, cur + (size_t)r * COLS,
                                             cur + (size_t)(r + 1) * COLS, c);
  }

  /* The same steps on the whole grid, serially. */
  {
    const long total = (long)nproc * ROWS;
    serial = malloc((size_t)total * ROW_BYTES);
    serial_next = malloc((size_t)total * ROW_BYTES);
    for (r = 0; r < total; r++)
      for (c = 0; c < COLS; c++) serial[(size_t)r * COLS + c] = initial(r, c);
    for (k = 0; k < steps; k++) {
      double* t;
      for (r = 0; r < total; r++)
        for (c = 0; c < COLS; c++)
          serial_next[(size_t)r * COLS + c] =
              stencil(serial + (size_t)((r + total - 1) % total) * COLS, serial + (size_t)r * COLS,
                      serial + (size_t)((r + 1) % total) * COLS, c);
      t = serial;
      serial = serial_next;
      serial_next = t;
    }
    for (r = 1; r <= ROWS; r++)
      for (c = 0; c < COLS; c++) {
        double diff = grid[steps % 2][(size_t)r * COLS + c] -
                      serial[((size_t)rank * ROWS + r - 1) * COLS + c];
        if (diff < 0) diff = -diff;
        if (diff > max_diff) max_diff = diff;
      }
    if (!(max_diff <= 1e-12)) errors++;
    free(serial);
    free(serial_next);
  }

  LCI_barrier(); /* nobody puts into our arrays any more */
  printf("halo_exchange: rank %d of %d, %d steps on %d x %d, max |diff| vs serial %.3g: %s\n", rank,
         nproc, steps, nproc * ROWS, COLS, max_diff, errors ? "FAIL" : "PASS");
  for (d = 0; d < 2; d++) LCI_memory_deregister(&remote_seg[d]);
  LCI_memory_deregister(&seg);
  LCI_queue_free(&local_cq);
  free(mem);
  LCI_finalize();
  return errors ? 1 : 0;
}
