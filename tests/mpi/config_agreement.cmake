# Ranks whose configuration differs: MPMD launches in which some
# ranks get another HETCOLL_* environment, and a profile and a decision
# table rewritten on disk between two ranks' reads. Every result is checked
# by the program (tests/mpi/mpi_config_agreement.cpp); where the
# configurations differ, MPI_COMM_WORLD must run natively on every rank and
# its rank 0 must say, in exactly one line, which setting differs between
# which ranks, while a communicator of the ranks that agree runs hetcoll.
# Settings that do not change decisions (HETCOLL_DEBUG, HETCOLL_HANG_TIMEOUT)
# may differ. A hang is a failure: the program aborts after 120 s.
#   cmake -DMPIRUN=... -DFLAVOR=openmpi|mpich -DAPP=... -DWORK=DIR -DSOURCE_DIR=... -P config_agreement.cmake
if(FLAVOR STREQUAL "mpich")
  set(global_args "")
else()
  set(global_args --oversubscribe --mca mpi_yield_when_idle 1 --mca btl self,vader,tcp)
endif()
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})

# launch(NAME EXPECT ARGS SEGMENT...): one MPMD job. ARGS: the program's
# arguments, '|'-separated; each SEGMENT "N|VAR=VALUE|..." is N ranks with
# that environment. EXPECT: the text the one line of disagreement must hold,
# or "" for none.
function(launch name expect args)
  string(REPLACE "|" ";" app_args "${args}")
  set(cmd ${MPIRUN} ${global_args})
  set(first TRUE)
  foreach(seg ${ARGN})
    string(REPLACE "|" ";" parts "${seg}")
    list(POP_FRONT parts n)
    if(NOT first)
      list(APPEND cmd ":")
    endif()
    set(first FALSE)
    list(APPEND cmd -n ${n} env ${parts} ${APP} ${app_args})
  endforeach()
  execute_process(COMMAND ${cmd} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 300)
  message("== ${name}: rc=${rc}\n${out}${err}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${name}: the program failed (a wrong result, an expectation not met, or a hang)")
  endif()
  string(REGEX MATCHALL "are configured differently" lines "${out}${err}")
  list(LENGTH lines n)
  if(expect STREQUAL "")
    if(NOT n EQUAL 0)
      message(FATAL_ERROR "${name}: ranks that agree were reported as configured differently")
    endif()
  else()
    if(NOT n EQUAL 1)
      message(FATAL_ERROR "${name}: expected exactly one line saying what differs, found ${n}")
    endif()
    string(FIND "${out}${err}" "${expect}" at)
    if(at EQUAL -1)
      message(FATAL_ERROR "${name}: the line does not say '${expect}'")
    endif()
  endif()
endfunction()

set(split "--expect|native|--others|hetcoll")
set(world "the ranks of MPI_COMM_WORLD (3 ranks) are configured differently, so it runs the native MPI's collectives: ")

# Six settings, each differing: rank 0 differs from ranks 1-2.
launch(algo_on_one_rank "${world}HETCOLL_ALGO is 'allreduce:0-inf:@ring_allreduce' on rank 0 but 'none' on ranks 1-2"
       ${split} "1|HETCOLL_ALGO=allreduce:@ring_allreduce" "2")
launch(disable_on_one_rank "${world}HETCOLL_DISABLE is '1' on rank 0 but '0' on ranks 1-2"
       ${split} "1|HETCOLL_DISABLE=1" "2")
# Learning on some ranks only would have them wait for exchanges the others never make.
launch(learn_off_on_one_rank "${world}HETCOLL_LEARN is '0' on rank 0 but '1' on ranks 1-2"
       ${split} "1|HETCOLL_LEARN=off" "2")
launch(hockney_crossovers "HETCOLL_PROFILE is 'hockney:alpha=1us,beta=1ns' on rank 0 but 'hockney:alpha=100us,beta=0.01ns' on ranks 1-2"
       ${split} "1|HETCOLL_PROFILE=hockney:alpha=1us,beta=1ns" "2|HETCOLL_PROFILE=hockney:alpha=100us,beta=0.01ns")
launch(postal_lambda "HETCOLL_PROFILE is 'postal:lambda=1' on rank 0 but 'postal:lambda=10' on ranks 1-2"
       ${split} "1|HETCOLL_PROFILE=postal:lambda=1" "2|HETCOLL_PROFILE=postal:lambda=10")
execute_process(COMMAND ${APP} --write-table ${WORK}/table.json ${WORK}/table_edited.json RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "could not write the decision tables")
endif()
launch(table_edited "HETCOLL_TABLE is '${WORK}/table_edited.json' on rank 0 but '${WORK}/table.json' on ranks 1-2"
       ${split} "1|HETCOLL_TABLE=${WORK}/table_edited.json" "2|HETCOLL_TABLE=${WORK}/table.json")

# One path, two contents: rank 0 reads the file, then it is replaced (a
# rename, as `hetcoll tune` writes a profile), then ranks 1-2 read it.
file(WRITE ${WORK}/model.json "{\"model\": \"hockney\", \"alpha\": 2e-6, \"beta\": 1e-9, \"gamma\": 1e-10}\n")
file(WRITE ${WORK}/model_new.json "{\"model\": \"hockney\", \"alpha\": 40e-6, \"beta\": 1e-11, \"gamma\": 1e-10}\n")
launch(profile_rewritten "HETCOLL_PROFILE is '${WORK}/model.json' (content "
       "--expect|native|--others|hetcoll|--reread|${WORK}/model.json|${WORK}/model_new.json"
       "3|HETCOLL_PROFILE=${WORK}/model.json")
# A probed profile re-probed (another file, the same path) between the reads.
file(READ ${SOURCE_DIR}/tests/python/data/smpi_two_subnets.json probed)
file(WRITE ${WORK}/probed.json "${probed}")
string(REPLACE "2026-11-23T16:36:18Z" "2026-11-25T09:00:00Z" reprobed "${probed}")
file(WRITE ${WORK}/reprobed.json "${reprobed}")
launch(probed_profile_rewritten "HETCOLL_PROFILE is '${WORK}/probed.json' (content "
       "--expect|native|--others|hetcoll|--reread|${WORK}/probed.json|${WORK}/reprobed.json"
       "3|HETCOLL_PROFILE=${WORK}/probed.json")
configure_file(${WORK}/table.json ${WORK}/table_live.json COPYONLY)
launch(table_rewritten "HETCOLL_TABLE is '${WORK}/table_live.json' (content "
       "--expect|native|--others|hetcoll|--reread|${WORK}/table_live.json|${WORK}/table_edited.json"
       "3|HETCOLL_TABLE=${WORK}/table_live.json")

# Three values among five ranks: each group named.
launch(three_values "HETCOLL_ALGO is 'bcast:0-inf:@star_bcast' on rank 0, 'bcast:0-inf:@chain_bcast' on ranks 1-2 and 'none' on ranks 3-4"
       "--expect|native|--max|65536" "1|HETCOLL_ALGO=bcast:@star_bcast" "2|HETCOLL_ALGO=bcast:@chain_bcast" "2")

# hetcoll_set_model with another model on rank 0: compared on MPI_COMM_WORLD.
launch(set_model_differs "HETCOLL_PROFILE is 'postal:lambda=1' on rank 0 but 'postal:lambda=10' on ranks 1-2"
       "--expect|native|--others|hetcoll|--set-model|postal:lambda=1|postal:lambda=10" "3")
# ... and one that repairs a difference of the environment.
launch(set_model_repairs "${world}HETCOLL_PROFILE is 'postal:lambda=1' on rank 0 but 'postal:lambda=10' on ranks 1-2"
       "--expect|hetcoll|--others|hetcoll|--set-model|hockney:alpha=5us,beta=1ns|hockney:alpha=5us,beta=1ns"
       "1|HETCOLL_PROFILE=postal:lambda=1" "2|HETCOLL_PROFILE=postal:lambda=10")

# Controls: the same configuration everywhere, and differences that do not
# change a decision.
launch(same_everywhere "" "--expect|hetcoll|--others|hetcoll" "1|HETCOLL_ALGO=allreduce:@ring_allreduce"
       "2|HETCOLL_ALGO=allreduce:@ring_allreduce")
launch(disabled_everywhere "" "--expect|native|--others|native" "3|HETCOLL_DISABLE=1")
launch(debug_and_timeout_differ "" "--expect|hetcoll|--others|hetcoll|--max|65536" "1|HETCOLL_DEBUG=explain"
       "2|HETCOLL_HANG_TIMEOUT=30")
