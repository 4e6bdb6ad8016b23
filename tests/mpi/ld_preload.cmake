# Runs the plain MPI program twice: natively, then with LD_PRELOAD of
# libhetcoll_mpi.so and HETCOLL_DEBUG=explain. Both must succeed; only the
# second may (and must) show hetcoll's decisions.
include(${CMAKE_CURRENT_LIST_DIR}/mpirun.cmake)
foreach(mode native preload)
  if(mode STREQUAL preload)
    mpirun_args(args 4 LD_PRELOAD=${LIB} HETCOLL_DEBUG=explain)
  else()
    mpirun_args(args 4)
  endif()
  execute_process(COMMAND ${MPIRUN} ${args} ${APP} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message("${mode}: rc=${rc}\n${out}${err}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${mode} run failed")
  endif()
  string(FIND "${err}" "hetcoll: MPI_Allreduce p=4" found)
  if(mode STREQUAL native AND NOT found EQUAL -1)
    message(FATAL_ERROR "hetcoll ran without LD_PRELOAD")
  endif()
  if(mode STREQUAL preload AND found EQUAL -1)
    message(FATAL_ERROR "LD_PRELOAD did not put hetcoll in charge")
  endif()
endforeach()

# A hostile or mistaken environment: a misspelled variable, an override
# that does not parse, a profile that is not one. The program still runs
# (correctly, on hetcoll's defaults) and world rank 0 alone says, once each,
# what was ignored.
mpirun_args(args 4 LD_PRELOAD=${LIB} HETCOLL_PROFIL=hockney:alpha=1us,beta=1ns HETCOLL_ALGO=bcast:@chain_bcast[seg=0]
            HETCOLL_PROFILE=/dev/zero HETCOLL_TABLE=${APP})
execute_process(COMMAND ${MPIRUN} ${args} ${APP} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("bad environment: rc=${rc}\n${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "a bad environment broke the program")
endif()
foreach(expect "unknown variable HETCOLL_PROFIL ignored \\(did you mean HETCOLL_PROFILE\\?\\)"
               "HETCOLL_ALGO ignored: override 'bcast:@chain_bcast\\[seg=0\\]': chain_bcast: parameter seg='0'"
               "HETCOLL_PROFILE ignored \\('/dev/zero' is not a regular file: not a model file\\)"
               "HETCOLL_TABLE ignored: [^\n]*plain_mpi_app: ")
  string(REGEX MATCHALL "${expect}" found "${err}")
  list(LENGTH found n)
  if(NOT n EQUAL 1)
    message(FATAL_ERROR "expected exactly one line matching '${expect}', found ${n}")
  endif()
endforeach()

# HETCOLL_DISABLE takes yes/no words; anything else is reported and ignored.
foreach(value off maybe)
  mpirun_args(args 2 LD_PRELOAD=${LIB} HETCOLL_DEBUG=explain HETCOLL_DISABLE=${value})
  execute_process(COMMAND ${MPIRUN} ${args} ${APP} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message("HETCOLL_DISABLE=${value}: rc=${rc}\n${err}")
  string(FIND "${err}" "hetcoll: MPI_Allreduce p=2" ran)
  if(NOT rc EQUAL 0 OR ran EQUAL -1)
    message(FATAL_ERROR "HETCOLL_DISABLE=${value} should leave hetcoll running")
  endif()
endforeach()
string(FIND "${err}" "HETCOLL_DISABLE='maybe' is not 1 or 0: ignored" said)
if(said EQUAL -1)
  message(FATAL_ERROR "HETCOLL_DISABLE=maybe was not reported")
endif()

# A per-rank model for another number of ranks: said once, by world rank 0
# (every rank finds the same), and the default model runs.
mpirun_args(args 3 LD_PRELOAD=${LIB} HETCOLL_PROFILE=hetero:nodes=FFFFS)
execute_process(COMMAND ${MPIRUN} ${args} ${APP} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("a model of 5 ranks on 3: rc=${rc}\n${err}")
string(REGEX MATCHALL "HETCOLL_PROFILE describes 5 ranks, the job has 3" said "${err}")
list(LENGTH said n)
if(NOT rc EQUAL 0 OR NOT n EQUAL 1)
  message(FATAL_ERROR "expected the program to run and one line about the model's size, found ${n}")
endif()
