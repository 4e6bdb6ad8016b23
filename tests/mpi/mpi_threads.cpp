// MPI_THREAD_MULTIPLE: collectives on different communicators from
// different threads at the same time, each verified; learning in the job
// (HETCOLL_LEARN's default) times and switches them meanwhile, so each
// thread only checks that hetcoll ran some of its calls.
//   mpirun -n K mpi_threads [--iterations N]   (300 calls a thread unless N)
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "hetcoll.h"

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank, p;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  if (provided < MPI_THREAD_MULTIPLE) {
    if (rank == 0) std::printf("mpi_threads: MPI_THREAD_MULTIPLE not provided; skipped\n");
    MPI_Finalize();
    return 77;
  }
  const int threads = 3;
  int iters = 300;
  if (argc == 3 && std::strcmp(argv[1], "--iterations") == 0 && std::atoi(argv[2]) > 0) {
    iters = std::atoi(argv[2]);
  } else if (argc != 1) {
    if (rank == 0) std::fprintf(stderr, "mpi_threads: usage: mpi_threads [--iterations N]\n");
    MPI_Finalize();
    return 2;
  }
  std::vector<MPI_Comm> comms(threads);
  for (auto& c : comms) MPI_Comm_dup(MPI_COMM_WORLD, &c);
  std::vector<long> bad(threads, 0), hetcoll_ran(threads, 0);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      MPI_Comm comm = comms[size_t(t)];
      std::vector<int> x(257), y(257), a(size_t(p) * 3), b(size_t(p) * 3);
      for (int it = 0; it < iters; ++it) {
        for (size_t i = 0; i < x.size(); ++i) x[i] = rank + int(i) + it + t;
        MPI_Allreduce(x.data(), y.data(), int(x.size()), MPI_INT, MPI_SUM, comm);
        char ran[128] = {0};
        hetcoll_last_algorithm(comm, ran, sizeof ran);
        if (ran[0]) ++hetcoll_ran[size_t(t)];
        for (size_t i = 0; i < y.size(); ++i)
          if (y[i] != p * (p - 1) / 2 + p * (int(i) + it + t)) ++bad[size_t(t)];
        int v = rank == it % p ? it * 7 + t : -1;
        MPI_Bcast(&v, 1, MPI_INT, it % p, comm);
        if (v != it * 7 + t) ++bad[size_t(t)];
        for (int j = 0; j < p; ++j)
          for (int k = 0; k < 3; ++k) a[size_t(j) * 3 + size_t(k)] = rank * 1000 + j * 10 + k + t;
        MPI_Alltoall(a.data(), 3, MPI_INT, b.data(), 3, MPI_INT, comm);
        for (int j = 0; j < p; ++j)
          for (int k = 0; k < 3; ++k)
            if (b[size_t(j) * 3 + size_t(k)] != j * 1000 + rank * 10 + k + t) ++bad[size_t(t)];
      }
    });
  for (auto& th : pool) th.join();
  long total = 0, idle = 0;  // idle: threads of which hetcoll ran no allreduce
  for (long x : bad) total += x;
  for (long n : hetcoll_ran) idle += n == 0;
  PMPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  PMPI_Allreduce(MPI_IN_PLACE, &idle, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    std::printf("mpi_threads p=%d: %d threads x %d iterations, %ld wrong results, %ld threads where hetcoll ran no "
                "allreduce (rank 0's thread 0 ran hetcoll's %ld of %d)\n",
                p, threads, iters, total, idle, hetcoll_ran[0], iters);
  for (auto& c : comms) MPI_Comm_free(&c);
  MPI_Finalize();
  return total || idle ? 1 : 0;
}
