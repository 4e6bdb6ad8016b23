# Runs the plain MPI program twice: natively, then with LD_PRELOAD of
# libhetcoll_mpi.so and HETCOLL_DEBUG=explain. Both must succeed; only the
# second may (and must) show hetcoll's decisions.
foreach(mode native preload)
  set(args -n 4 --oversubscribe --mca mpi_yield_when_idle 1 --mca btl self,vader,tcp)
  if(mode STREQUAL preload)
    list(APPEND args -x LD_PRELOAD=${LIB} -x HETCOLL_DEBUG=explain)
  endif()
  execute_process(COMMAND ${MPIRUN} ${args} ${APP} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message("${mode}: rc=${rc}\n${out}${err}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${mode} run failed")
  endif()
  string(FIND "${err}" "hetcoll: allreduce p=4" found)
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
set(args -n 4 --oversubscribe --mca mpi_yield_when_idle 1 --mca btl self,vader,tcp -x LD_PRELOAD=${LIB}
    -x HETCOLL_PROFIL=hockney:alpha=1us,beta=1ns -x HETCOLL_ALGO=bcast:@chain_bcast[seg=0] -x HETCOLL_PROFILE=/dev/zero)
execute_process(COMMAND ${MPIRUN} ${args} ${APP} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("bad environment: rc=${rc}\n${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "a bad environment broke the program")
endif()
foreach(expect "unknown variable HETCOLL_PROFIL ignored \\(did you mean HETCOLL_PROFILE\\?\\)"
               "HETCOLL_ALGO ignored: override 'bcast:@chain_bcast\\[seg=0\\]': chain_bcast: parameter seg='0'"
               "HETCOLL_PROFILE ignored \\('/dev/zero' is larger than 64 MiB: not a model file\\)")
  string(REGEX MATCHALL "${expect}" found "${err}")
  list(LENGTH found n)
  if(NOT n EQUAL 1)
    message(FATAL_ERROR "expected exactly one line matching '${expect}', found ${n}")
  endif()
endforeach()
