# Script mode (cmake -P), run at every build by the hdb_git_commit target: writes OUT, a header that
# defines HDB_GIT_COMMIT as the commit the sources are built from (12 hex digits, "-dirty" when tracked
# files differ from it; "unknown" outside git). At configure time the commit went stale as soon as a
# later commit was built in the same folder; the file is rewritten only when the text changes, so an
# unchanged commit recompiles nothing.
execute_process(COMMAND git rev-parse --short=12 HEAD WORKING_DIRECTORY "${SOURCE_DIR}"
                OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR commit STREQUAL "")
  set(commit "unknown")
else()
  execute_process(COMMAND git diff --quiet HEAD -- WORKING_DIRECTORY "${SOURCE_DIR}" RESULT_VARIABLE dirty
                  OUTPUT_QUIET ERROR_QUIET)
  if(dirty EQUAL 1)
    string(APPEND commit "-dirty")
  endif()
endif()
set(text "#pragma once\n#define HDB_GIT_COMMIT \"${commit}\"\n")
set(old "")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUT}" "${text}")
endif()
