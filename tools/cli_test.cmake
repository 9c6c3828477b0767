# Runs topocoll-model with ARGS ("|"-separated) and checks its exit code
# (EXPECT_RC) and that its output matches EXPECT: a ctest property can check
# one of the two, not both.
#   cmake -DCLI=... -DARGS=--p|0 -DEXPECT_RC=2 -DEXPECT=regex -P cli_test.cmake
string(REPLACE "|" ";" args "${ARGS}")
execute_process(COMMAND ${CLI} ${args} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE err TIMEOUT 20)
message("${out}${err}")
if(NOT rc STREQUAL EXPECT_RC)
  message(FATAL_ERROR "topocoll-model ${args}: exit code ${rc}, expected ${EXPECT_RC}")
endif()
if(NOT "${out}${err}" MATCHES "${EXPECT}")
  message(FATAL_ERROR "topocoll-model ${args}: the output does not match \"${EXPECT}\"")
endif()
