# Hostile profiles and decision tables under the MPI layer: a
# profile probed here (so that its hosts are this machine's and the MPI
# layer plans on it), made hostile by tests/fuzz/make_corpus.py, and the
# planner's decision table edited by hand; each runs the checking
# application (tests/mpi/mpi_config_agreement.cpp: bcast … scan from 8 B
# to 1 MiB, every result against a closed form) on 3 ranks. Every run must
# give right results, end within its timeout, and never report an internal
# error: a profile or table hetcoll cannot use is refused in one line and
# the defaults apply.
#   cmake -DMPIRUN=... -DFLAVOR=openmpi|mpich -DAPP=... -DPROBE=... -DPYTHON=... -DWORK=DIR -DSOURCE_DIR=...
#         -P preload_fuzz.cmake
include(${SOURCE_DIR}/tests/mpi/mpirun.cmake)
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})

mpirun_args(args 3)
# The base profile only: on a busy machine (CI's tests two at a time, eight
# ranks on two cores) the probe may refuse what it measured — shared
# memory's large message no slower than its small one, noise — as it
# should; it is asked again, up to three times.
foreach(attempt 1 2 3)
  execute_process(COMMAND ${MPIRUN} ${args} ${PROBE} -o ${WORK}/base.json --budget 10 --no-progress
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 300)
  if(rc EQUAL 0)
    break()
  endif()
  message(STATUS "the probe refused its measurements (attempt ${attempt}): ${err}")
endforeach()
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the probe failed:\n${out}${err}")
endif()
execute_process(COMMAND ${APP} --write-table ${WORK}/table.json ${WORK}/table_edited.json RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "could not write the decision table")
endif()
execute_process(COMMAND ${PYTHON} ${SOURCE_DIR}/tests/fuzz/make_corpus.py ${WORK}/corpus --quick
                        --base ${WORK}/base.json --table ${WORK}/table.json
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "could not write the corpus: ${err}")
endif()

file(STRINGS ${WORK}/corpus/index.txt entries)
set(runs 0)
set(i 0)
# Which profiles: every fifth (every fifteenth under MPICH, whose busy polling
# makes each run of 3 ranks on 2 cores slow; the files' reading is the same).
set(stride 5)
if(FLAVOR STREQUAL "mpich")
  set(stride 15)
endif()
foreach(entry ${entries})
  string(REPLACE "\t" ";" parts "${entry}")
  list(GET parts 0 name)
  math(EXPR i "${i} + 1")
  math(EXPR pick "${i} % ${stride}")
  # Every table; of the profiles every fifth, the unchanged one, the tuned
  # decisions no rule admits and the files that are no profile.
  if(name MATCHES "^tables/")
    set(var HETCOLL_TABLE)
  elseif(pick EQUAL 0 OR name MATCHES "as_probed|__tuned_|file__")
    set(var HETCOLL_PROFILE)
  else()
    continue()
  endif()
  mpirun_args(args 3 ${var}=${WORK}/corpus/${name})
  execute_process(COMMAND ${MPIRUN} ${args} ${APP} --max 1048576 --timeout 120
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 300)
  math(EXPR runs "${runs} + 1")
  string(FIND "${out}${err}" "internal error" internal)
  if(NOT rc EQUAL 0 OR NOT internal EQUAL -1)
    message(FATAL_ERROR "${var}=${name}: rc=${rc}\n${out}${err}")
  endif()
  string(REGEX MATCH "mpi_config_agreement p=3: [0-9]+ checks, 0 wrong" ok "${out}")
  if(NOT ok)
    message(FATAL_ERROR "${var}=${name}: no clean summary\n${out}${err}")
  endif()
  string(REGEX MATCHALL "hetcoll: [^\n]*" said "${err}")
  list(LENGTH said n)
  message("${var}=${name}: right results; ${n} lines from hetcoll")
endforeach()
message("${runs} runs, every result right")
