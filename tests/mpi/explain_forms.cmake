# HETCOLL_DEBUG=explain names the call as the program made it: one
# program calls MPI_Bcast, MPI_Ibcast and the persistent MPI_Bcast_init
# (MPIX_Bcast_init under Open MPI 4) with the same shape; rank 0 says one
# line for each form, each naming its form.
include(${CMAKE_CURRENT_LIST_DIR}/mpirun.cmake)
mpirun_args(args 3 HETCOLL_DEBUG=explain)
execute_process(COMMAND ${MPIRUN} ${args} ${APP} explain RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("rc=${rc}\n${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the program failed")
endif()
foreach(form "MPI_Bcast" "MPI_Ibcast")
  if(NOT err MATCHES "hetcoll: ${form} p=3 root=0 size=4000B: [a-z_]+")
    message(FATAL_ERROR "no explain line names ${form}")
  endif()
endforeach()
if(out MATCHES "the persistent form was called" AND NOT err MATCHES "hetcoll: (MPIX|MPI)_Bcast_init p=3 root=0 size=4000B: [a-z_]+")
  message(FATAL_ERROR "no explain line names the persistent MPI_Bcast_init")
endif()
string(REGEX MATCHALL "hetcoll: MPI_Ibcast p=3 root=0 size=4000B" lines "${err}")
list(LENGTH lines n)
if(NOT n EQUAL 1)
  message(FATAL_ERROR "MPI_Ibcast explained ${n} times, not once")
endif()
