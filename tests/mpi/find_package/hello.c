/* The smallest MPI program: each rank says who it is. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  printf("mpi_hello: rank %d of %d\n", rank, size);
  MPI_Finalize();
  return 0;
}
