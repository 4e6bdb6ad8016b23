# A rank arrives 4 s late to an allreduce, then to an MPI_Iallreduce; with
# HETCOLL_HANG_TIMEOUT=1 the others must report what they wait for — the
# collective, the communicator, a message involving the late rank — and
# the calls must then complete.
include(${CMAKE_CURRENT_LIST_DIR}/mpirun.cmake)
mpirun_args(args 3 HETCOLL_HANG_TIMEOUT=1)
execute_process(COMMAND ${MPIRUN} ${args} ${APP} hang RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("rc=${rc}\n${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the late allreduce failed")
endif()
if(NOT err MATCHES "hetcoll: MPI_Allreduce on communicator MPI_COMM_WORLD \\(rank [01] of 3\\) has waited [0-9]+ s: it waits[^\n]*(from|to) rank 2")
  message(FATAL_ERROR "no report of what the allreduce waits for")
endif()
if(NOT err MATCHES "hetcoll: MPI_Iallreduce on communicator MPI_COMM_WORLD \\(rank [01] of 3\\) has waited [0-9]+ s: it waits[^\n]*(from|to) rank 2")
  message(FATAL_ERROR "no report of what the waited MPI_Iallreduce waits for")
endif()
